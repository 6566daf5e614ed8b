// Strong time types for vtime: Duration and TimePoint in int64 nanoseconds.
//
// Why: the virtual clock, the waiter table and the Batsim protocol all exchange instants; a bare
// double or an integer of unknown unit is how off-by-1e9 bugs happen. These types are plain
// values (trivially copyable, fit in shared memory), saturate instead of overflowing, and convert
// explicitly to and from timespec/timeval and Batsim's double seconds.
//
// Example:
//     using namespace vtime;
//     TimePoint deadline = TimePoint::origin() + seconds(30) + milliseconds(5);
//     timespec ts = to_timespec(deadline - TimePoint::origin());
//     Duration d = from_timespec(ts);          // == seconds(30) + milliseconds(5)
#pragma once

#include <sys/time.h>
#include <time.h>

#include <compare>
#include <cstdint>
#include <limits>

namespace vtime {

namespace detail {
constexpr int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}
constexpr int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}
constexpr int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  return r;
}
}  // namespace detail

// A signed span of time in nanoseconds. Infinite durations saturate at the int64 limits.
class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration nanoseconds(int64_t ns) { return Duration(ns); }
  static constexpr Duration infinite() { return Duration(std::numeric_limits<int64_t>::max()); }
  static constexpr Duration zero() { return Duration(0); }

  constexpr int64_t ns() const { return ns_; }
  constexpr bool is_infinite() const { return ns_ == std::numeric_limits<int64_t>::max(); }
  constexpr double seconds_f() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Duration operator+(Duration o) const { return Duration(detail::sat_add(ns_, o.ns_)); }
  constexpr Duration operator-(Duration o) const { return Duration(detail::sat_sub(ns_, o.ns_)); }
  constexpr Duration operator*(int64_t k) const { return Duration(detail::sat_mul(ns_, k)); }
  constexpr Duration operator-() const { return Duration(detail::sat_sub(0, ns_)); }
  constexpr Duration& operator+=(Duration o) { return *this = *this + o; }
  constexpr Duration& operator-=(Duration o) { return *this = *this - o; }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

constexpr Duration nanoseconds(int64_t n) { return Duration::nanoseconds(n); }
constexpr Duration microseconds(int64_t n) { return Duration::nanoseconds(detail::sat_mul(n, 1000)); }
constexpr Duration milliseconds(int64_t n) { return Duration::nanoseconds(detail::sat_mul(n, 1000000)); }
constexpr Duration seconds(int64_t n) { return Duration::nanoseconds(detail::sat_mul(n, 1000000000)); }
constexpr Duration minutes(int64_t n) { return seconds(detail::sat_mul(n, 60)); }
constexpr Duration hours(int64_t n) { return seconds(detail::sat_mul(n, 3600)); }

// An instant on the virtual time line: nanoseconds since the session origin (virtual time 0).
class TimePoint {
 public:
  constexpr TimePoint() = default;
  static constexpr TimePoint origin() { return TimePoint(0); }
  static constexpr TimePoint from_ns(int64_t ns) { return TimePoint(ns); }
  static constexpr TimePoint never() { return TimePoint(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return ns_; }
  constexpr bool is_never() const { return ns_ == std::numeric_limits<int64_t>::max(); }

  constexpr TimePoint operator+(Duration d) const { return TimePoint(detail::sat_add(ns_, d.ns())); }
  constexpr TimePoint operator-(Duration d) const { return TimePoint(detail::sat_sub(ns_, d.ns())); }
  constexpr Duration operator-(TimePoint o) const { return Duration::nanoseconds(detail::sat_sub(ns_, o.ns_)); }
  constexpr auto operator<=>(const TimePoint&) const = default;

 private:
  constexpr explicit TimePoint(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

// Conversions at the edges. Negative durations map to negative tv_sec with tv_nsec in [0, 1e9).
constexpr timespec to_timespec(Duration d) {
  int64_t s = d.ns() / 1000000000;
  int64_t n = d.ns() % 1000000000;
  if (n < 0) { n += 1000000000; --s; }
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(s);
  ts.tv_nsec = static_cast<long>(n);
  return ts;
}
constexpr timeval to_timeval(Duration d) {
  timespec ts = to_timespec(d);
  timeval tv{};
  tv.tv_sec = ts.tv_sec;
  tv.tv_usec = static_cast<suseconds_t>(ts.tv_nsec / 1000);
  return tv;
}
constexpr Duration from_timespec(const timespec& ts) {
  return seconds(static_cast<int64_t>(ts.tv_sec)) + nanoseconds(ts.tv_nsec);
}
constexpr Duration from_timeval(const timeval& tv) {
  return seconds(static_cast<int64_t>(tv.tv_sec)) + microseconds(tv.tv_usec);
}
// Batsim's protocol carries double seconds; round to the nearest nanosecond.
constexpr Duration from_seconds_f(double s) {
  double ns = s * 1e9;
  if (ns >= 9.2e18) return Duration::infinite();
  if (ns <= -9.2e18) return -Duration::infinite();
  return nanoseconds(static_cast<int64_t>(ns < 0 ? ns - 0.5 : ns + 0.5));
}

}  // namespace vtime
