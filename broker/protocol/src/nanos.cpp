#include "vtime/protocol/nanos.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace vtime::protocol {

std::optional<Nanos> Nanos::from_seconds(double s) {
  if (!std::isfinite(s)) return std::nullopt;
  double ns = std::round(s * 1e9);
  // 9.2e18 is just under INT64_MAX: anything larger cannot be represented exactly.
  if (ns >= 9.2e18 || ns <= -9.2e18) return std::nullopt;
  return Nanos(static_cast<int64_t>(ns));
}

namespace {
// Integer formatting avoids double rounding surprises (10.0006 is not representable).
std::string format_fixed(int64_t ns, bool force_micro) {
  bool negative = ns < 0;
  // Work on the magnitude in unsigned arithmetic so INT64_MIN is safe.
  uint64_t mag = negative ? uint64_t(0) - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (force_micro) mag = (mag + 500) / 1000 * 1000;
  uint64_t whole = mag / 1'000'000'000u;
  uint64_t frac = mag % 1'000'000'000u;
  char buf[48];
  if (frac % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, negative ? "-" : "", whole,
                  frac / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%09" PRIu64, negative ? "-" : "", whole, frac);
  }
  return buf;
}
}  // namespace

std::string format_seconds(Nanos t) { return format_fixed(t.ns(), false); }
std::string format_seconds_6(Nanos t) { return format_fixed(t.ns(), true); }

}  // namespace vtime::protocol
