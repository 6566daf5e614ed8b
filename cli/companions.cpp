// Finding the shim and the rewriter (see companions.h).
#include "companions.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace vtime::cli {
namespace {

namespace fs = std::filesystem;

// $env if set (it must be usable), else the first usable of `beside` (paths relative to the
// directory of the running vtime), else `built` (the build tree's path, may be null).
std::string find_companion(const char* env, const std::vector<const char*>& beside, const char* built, int mode,
                           const char* what, std::string& why) {
  if (const char* v = getenv(env); v && *v) {
    if (access(v, mode) == 0) return fs::absolute(v).string();
    why = std::string(env) + "=" + v + (mode == X_OK ? " is not executable" : " is not readable");
    return {};
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    for (const char* rel : beside) candidates.push_back(exe.parent_path() / rel);
  }
  if (built) candidates.emplace_back(built);
  for (auto& c : candidates) {
    if (access(c.c_str(), mode) == 0) return fs::weakly_canonical(c, ec).string();
  }
  why = std::string(what) + " not found next to the vtime binary; set " + env + " to its path";
  return {};
}

}  // namespace

std::string find_shim(std::string& why) {
#ifdef VTIME_BUILD_SHIM
  const char* built = VTIME_BUILD_SHIM;
#else
  const char* built = nullptr;
#endif
  return find_companion("VTIME_SHIM",
                        {"../lib/vtime/libvtime-shim.so", "../lib/libvtime-shim.so", "../shim/libvtime-shim.so",
                         "libvtime-shim.so"},
                        built, R_OK, "libvtime-shim.so", why);
}

std::string find_rewriter(std::string& why) {
#ifdef VTIME_BUILD_REWRITE
  const char* built = VTIME_BUILD_REWRITE;
#else
  const char* built = nullptr;
#endif
  return find_companion("VTIME_REWRITE", {"../lib/vtime/vtime-rewrite", "../rewriter/vtime-rewrite", "vtime-rewrite"},
                        built, X_OK,
                        "vtime-rewrite (the rewriter, built only when libclang-19-dev or -16-dev is installed)", why);
}

}  // namespace vtime::cli

namespace vtime::cli {

std::string find_slurm_bridge(std::string& why) {
#ifdef VTIME_BUILD_SLURM
  const char* built = VTIME_BUILD_SLURM;
#else
  const char* built = nullptr;
#endif
  return find_companion("VTIME_SLURM", {"vtime-slurm", "../slurm/vtime-slurm"}, built, X_OK,
                        "vtime-slurm (built only when libslurm-dev is installed)", why);
}

std::string find_k8s_bridge(std::string& why) {
#ifdef VTIME_BUILD_K8S
  const char* built = VTIME_BUILD_K8S;
#else
  const char* built = nullptr;
#endif
  return find_companion("VTIME_K8S", {"vtime-k8s", "../k8s/vtime-k8s"}, built, X_OK, "vtime-k8s", why);
}

std::string find_validate_harness(const std::string& name, std::string& why) {
  std::string file = name + "_reference.py";
#ifdef VTIME_SOURCE_BENCH
  std::string built = std::string(VTIME_SOURCE_BENCH) + "/" + file;
  const char* built_path = built.c_str();
#else
  const char* built_path = nullptr;
#endif
  std::string installed = "../share/vtime/validate/" + file;
  std::string what = "the real-time harness of vtime validate (" + file + ")";
  return find_companion("VTIME_VALIDATE_HARNESS", {installed.c_str()}, built_path, R_OK, what.c_str(), why);
}

}  // namespace vtime::cli
