// The TSC calibration of the running clock (see tsc_clock.h).
#include "tsc_clock.h"

#include <vtime/session.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace vtime::detail {

namespace {

bool has_flag(const std::string& flags, const char* flag) {
  std::istringstream in(flags);
  std::string f;
  while (in >> f) {
    if (f == flag) return true;
  }
  return false;
}

bool counter_is_trusted() {
#if defined(__x86_64__)
  if (const char* e = std::getenv("VTIME_TSC"); e && std::strcmp(e, "0") == 0) return false;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool flags_ok = false;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    flags_ok = has_flag(line, "constant_tsc") && has_flag(line, "nonstop_tsc");
    break;  // every CPU has the same flags
  }
  std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  cs >> source;
  return flags_ok && (source == "tsc" || source == "kvm-clock");
#else
  return false;
#endif
}

}  // namespace

TscCalibration::TscCalibration() {
  static const bool trusted = counter_is_trusted();
  usable_ = trusted;
  if (usable_) first_ = take();
}

TscCalibration::Pair TscCalibration::take() const {
  // The counter read twice around the real clock, and the middle kept: the pair's error is half
  // the real read's cost.
  uint64_t a = read_tsc();
  int64_t mono = real_monotonic_ns();
  uint64_t b = read_tsc();
  return {a + (b - a) / 2, mono};
}

uint64_t TscCalibration::mult(const Pair& now, int64_t rate_ppm) const {
  if (!usable_ || rate_ppm <= 0) return 0;
  int64_t span_ns = now.mono_ns - first_.mono_ns;
  auto ticks = static_cast<int64_t>(now.tsc - first_.tsc);
  if (span_ns < 1'000'000 || ticks <= 0) return 0;
  // ns per tick must be a clock between 50 MHz and 20 GHz.
  double ns_per_tick = static_cast<double>(span_ns) / static_cast<double>(ticks);
  if (ns_per_tick < 0.05 || ns_per_tick > 20.0) return 0;
  __extension__ typedef unsigned __int128 uwide;
  uwide m = (static_cast<uwide>(span_ns) << 32) * static_cast<uwide>(rate_ppm) /
            (static_cast<uwide>(ticks) * 1000000u);
  if (m == 0 || m > UINT64_MAX) return 0;
  return static_cast<uint64_t>(m);
}

}  // namespace vtime::detail
