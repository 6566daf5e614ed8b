// Finding libvtime-shim.so (see shim_path.h).
#include "shim_path.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace vtime::cli {

std::string find_shim(std::string& why) {
  namespace fs = std::filesystem;
  if (const char* env = getenv("VTIME_SHIM"); env && *env) {
    if (access(env, R_OK) == 0) return fs::absolute(env).string();
    why = std::string("VTIME_SHIM=") + env + " is not readable";
    return {};
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    fs::path dir = exe.parent_path();
    candidates = {dir / "../lib/vtime/libvtime-shim.so", dir / "../lib/libvtime-shim.so",
                  dir / "../shim/libvtime-shim.so", dir / "libvtime-shim.so"};
  }
#ifdef VTIME_BUILD_SHIM
  candidates.emplace_back(VTIME_BUILD_SHIM);
#endif
  for (auto& c : candidates) {
    if (access(c.c_str(), R_OK) == 0) return fs::weakly_canonical(c, ec).string();
  }
  why = "libvtime-shim.so not found next to the vtime binary; set VTIME_SHIM to its path";
  return {};
}

}  // namespace vtime::cli
