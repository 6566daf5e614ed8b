// SimTime: an instant or a duration of the embedded simulation, in attoseconds (128-bit).
//
// Why not Nanos: on a networked platform every internal message of Batsim costs the route's
// latency plus one byte at the route's bottleneck bandwidth (1 / 41.279125 MB/s = 24.2253 ns on
// Batsim's small_platform.xml), and these terms add up along the whole run. Rounded to the
// nanosecond they would drift by a few ns over thousands of messages and flip the sixth decimal
// that Batsim writes. Attoseconds keep them exact to far below SimGrid's own double precision,
// and 128 bits still span 10^20 s. The protocol edge stays in Nanos (Batsim writes "%f", so
// what the scheduler sees is the time rounded to the microsecond: `to_micros()`).
//
// Example:
//     SimTime t = SimTime::from_nanos(Nanos::seconds(10)) + SimTime::from_seconds(0.0006L);
//     t.to_micros();                 // Nanos 10.000600000
//     format_seconds_6(t);           // "10.000600"
#pragma once

#include <compare>
#include <string>

#include "vtime/protocol/nanos.h"

namespace vtime::sim {

using protocol::Nanos;

class SimTime {
 public:
  __extension__ using Rep = __int128;
  static constexpr Rep kPerSecond = static_cast<Rep>(1'000'000'000'000'000'000LL);
  static constexpr Rep kPerNano = 1'000'000'000;

  constexpr SimTime() = default;
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime from_nanos(Nanos n) { return SimTime(static_cast<Rep>(n.ns()) * kPerNano); }
  static constexpr SimTime from_attos(Rep a) { return SimTime(a); }
  // Rounded to the nearest attosecond (s must be finite and within +-1e20).
  static SimTime from_seconds(long double s);
  // A double's exact binary value, rounded to the nearest attosecond (no libm rounding calls:
  // the kernel's clock is converted for every event and job row). d finite, |d| < 1e20.
  static SimTime from_double(double d);

  constexpr Rep attos() const { return v_; }
  Nanos to_nanos() const;    // rounded to the nearest nanosecond
  Nanos to_micros() const;   // rounded to the nearest microsecond, as Batsim's "%f" shows it
  long double seconds() const { return static_cast<long double>(v_) / static_cast<long double>(kPerSecond); }

  constexpr SimTime operator+(SimTime o) const { return SimTime(v_ + o.v_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(v_ - o.v_); }
  constexpr SimTime& operator+=(SimTime o) { v_ += o.v_; return *this; }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(Rep v) : v_(v) {}
  Rep v_ = 0;
};

// "%f": seconds with 6 decimals, rounded to the nearest microsecond (halves away from zero).
std::string format_seconds_6(SimTime t);

}  // namespace vtime::sim
