#include "vtime/sim/sim_time.h"

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace vtime::sim {

namespace {
using Rep = SimTime::Rep;

// a / b rounded to the nearest integer, halves away from zero (b > 0).
Rep div_round(Rep a, Rep b) {
  Rep q = a / b, r = a % b;
  if (r < 0) r = -r;
  if (2 * r >= b) q += a < 0 ? -1 : 1;
  return q;
}
}  // namespace

SimTime SimTime::from_seconds(long double s) {
  // Whole seconds and the fraction apart: a long double holds 64 bits of mantissa, not the
  // 67 that 10^20 s in attoseconds need.
  long double whole = std::trunc(s);
  long double frac = s - whole;
  Rep a = static_cast<Rep>(static_cast<long long>(whole)) * kPerSecond;
  return SimTime(a + static_cast<Rep>(std::llroundl(frac * 1e18L)));
}

SimTime SimTime::from_double(double d) {
  if (d == 0) return SimTime(0);
  int e = 0;
  double f = std::frexp(d, &e);                              // d = f * 2^e, 0.5 <= |f| < 1
  auto m = static_cast<int64_t>(std::ldexp(f, 53));          // d = m * 2^(e - 53), exactly
  Rep a = static_cast<Rep>(m) * kPerSecond;                  // < 2^113
  int shift = e - 53;
  if (shift >= 0) return SimTime(a << shift);
  if (shift <= -126) return SimTime(0);
  Rep half = static_cast<Rep>(1) << (-shift - 1);
  return SimTime(a >= 0 ? (a + half) >> -shift : -((-a + half) >> -shift));
}

Nanos SimTime::to_nanos() const { return Nanos::from_ns(static_cast<int64_t>(div_round(v_, kPerNano))); }

Nanos SimTime::to_micros() const {
  return Nanos::from_ns(static_cast<int64_t>(div_round(v_, kPerNano * 1000) * 1000));
}

std::string format_seconds_6(SimTime t) {
  Rep us = div_round(t.attos(), SimTime::kPerNano * 1000);
  bool negative = us < 0;
  if (negative) us = -us;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, negative ? "-" : "",
                static_cast<uint64_t>(us / 1'000'000), static_cast<uint64_t>(us % 1'000'000));
  return buf;
}

}  // namespace vtime::sim
