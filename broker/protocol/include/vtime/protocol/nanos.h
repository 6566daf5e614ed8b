// Nanos: simulated time on Batsim's time line, in int64 nanoseconds since simulation start.
//
// Why: Batsim speaks double seconds; everything behind the protocol edge compares and adds
// instants exactly. Doubles are converted here only, rounded to the nearest nanosecond.
// The type is deliberately tiny and converts trivially to vtime::Duration / vtime::TimePoint
// (<vtime/time.h>): `vtime::TimePoint::from_ns(n.ns())`.
//
// Example:
//     using vtime::protocol::Nanos;
//     Nanos t = Nanos::from_seconds(10.0006);      // 10'000'600'000 ns
//     std::string s = format_seconds(t);           // "10.000600" (Batsim's %f format)
//     Nanos later = t + Nanos::seconds(5);
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace vtime::protocol {

class Nanos {
 public:
  constexpr Nanos() = default;
  static constexpr Nanos from_ns(int64_t ns) { return Nanos(ns); }
  static constexpr Nanos seconds(int64_t s) { return Nanos(s * 1'000'000'000); }
  static constexpr Nanos zero() { return Nanos(0); }
  static constexpr Nanos max() { return Nanos(std::numeric_limits<int64_t>::max()); }

  // Seconds as a double -> nanoseconds, rounded to nearest. nullopt when not finite or beyond
  // about +-292 years (the int64 range), so callers can report a precise error.
  static std::optional<Nanos> from_seconds(double s);

  constexpr int64_t ns() const { return ns_; }
  double to_seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Nanos operator+(Nanos o) const { return Nanos(ns_ + o.ns_); }
  constexpr Nanos operator-(Nanos o) const { return Nanos(ns_ - o.ns_); }
  constexpr Nanos& operator+=(Nanos o) { ns_ += o.ns_; return *this; }
  constexpr auto operator<=>(const Nanos&) const = default;

 private:
  constexpr explicit Nanos(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

// Batsim writes every double with "%f" (6 decimals). Instants that are whole microseconds are
// written exactly that way; finer instants keep all 9 decimals rather than being rounded onto
// (or before) Batsim's clock, which would turn a valid CALL_ME_LATER into an invalid one.
std::string format_seconds(Nanos t);

// "%f" of t rounded to the microsecond, as Batsim writes times into its CSV outputs.
std::string format_seconds_6(Nanos t);

}  // namespace vtime::protocol
