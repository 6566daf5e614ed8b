// The logging facility (see vtime/log.h). The configuration is parsed once, on first use.
#include <vtime/log.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace vtime {
namespace {

struct Config {
  LogLevel all = LogLevel::kWarn;
  std::map<std::string, LogLevel, std::less<>> modules;
};

bool parse_level(const std::string& s, LogLevel& out) {
  static const char* names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; ++i) {
    if (s == names[i]) {
      out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

const Config& config() {
  static const Config c = [] {
    Config cfg;
    const char* env = getenv("VTIME_LOG");
    if (!env) return cfg;
    std::string spec(env);
    size_t pos = 0;
    while (pos <= spec.size()) {
      size_t end = spec.find(',', pos);
      if (end == std::string::npos) end = spec.size();
      std::string item = spec.substr(pos, end - pos);
      size_t eq = item.find('=');
      LogLevel lvl;
      if (eq == std::string::npos) {
        if (parse_level(item, lvl)) cfg.all = lvl;
      } else if (parse_level(item.substr(eq + 1), lvl)) {
        cfg.modules[item.substr(0, eq)] = lvl;
      }
      pos = end + 1;
    }
    return cfg;
  }();
  return c;
}

}  // namespace

bool log_enabled(const char* module, LogLevel level) {
  const Config& c = config();
  auto it = c.modules.find(module);
  LogLevel limit = it != c.modules.end() ? it->second : c.all;
  return static_cast<int>(level) <= static_cast<int>(limit);
}

void log_message(const char* module, LogLevel, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "vtime[%s] %s\n", module, buf);
}

}  // namespace vtime
