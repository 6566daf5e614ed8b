// One logging facility for every vtime component, with per-module levels from VTIME_LOG.
//
// VTIME_LOG="controller=debug,broker=info" (or just "debug" for every module). Levels: error,
// warn, info, debug. Default: warn. Messages go to stderr as "vtime[module] message".
//
// Example:
//     VTIME_LOGF("controller", vtime::LogLevel::kDebug, "advance to %lld", (long long)t.ns());
#pragma once

#include <cstdarg>

namespace vtime {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

bool log_enabled(const char* module, LogLevel level);
void log_message(const char* module, LogLevel level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

}  // namespace vtime

#define VTIME_LOGF(module, level, ...)                                              \
  do {                                                                              \
    if (::vtime::log_enabled(module, level)) ::vtime::log_message(module, level, __VA_ARGS__); \
  } while (0)
