// The components' environment (see component_env.h).
#include "component_env.h"

#include <cstring>
#include <map>
#include <stdexcept>

namespace vtime::k8s {
namespace {

constexpr size_t kSessionWidth = 40;

bool kept(const std::string& name) {
  // vtime's, which the shim and libvtime read in the components; the Go runtime's own settings.
  static const char* const kKept[] = {"LD_PRELOAD", "VTIME_SESSION", "VTIME_TSC",  "GOMAXPROCS",
                                      "GODEBUG",    "GOGC",          "GOMEMLIMIT", "GOTRACEBACK"};
  for (const char* k : kKept) {
    if (name == k) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> component_environment(char** environ, const std::vector<std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string name(*e, static_cast<size_t>(eq - *e));
    if (kept(name)) env.emplace(name, eq + 1);
  }
  // The session's path names vtime's pid and a descriptor, whose digits vary from run to run:
  // padded to one length with leading slashes (the same path to open(), and to the shim, which
  // looks for its session's path inside the variable).
  if (auto it = env.find("VTIME_SESSION"); it != env.end() && it->second.size() < kSessionWidth) {
    it->second.insert(0, kSessionWidth - it->second.size(), '/');
  }
  env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  // Go's os.Getwd returns $PWD when it names the working directory, else asks the kernel, whose
  // answer's length is the run directory's (a longer -e prefix changed schedules). This name
  // of the working directory has one length wherever the run is; HOME is the run's directory
  // too (kubectl keeps a cache under it).
  env["PWD"] = "/proc/self/cwd";
  env["HOME"] = "/proc/self/cwd";
  // Not the machine's /etc/localtime: the zone a Go program loads changed kube-scheduler's
  // start-up too (America/New_York and Australia/Sydney gave two orders). Go takes "UTC" as is,
  // without reading a file.
  env["TZ"] = "UTC";
  for (const auto& x : extra) {
    auto eq = x.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument("'" + x + "' is not NAME=VALUE");
    }
    env[x.substr(0, eq)] = x.substr(eq + 1);
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace vtime::k8s
