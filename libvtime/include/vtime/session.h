// A vtime session: the shared-memory segment of one virtual-time world, seen from one process.
//
// What it is for: the controller (`vtime exec`, the broker) creates the session; every process
// of the wrapped tree attaches to it through the spec in VTIME_SESSION. The segment is created
// with a random name, mode 0600 and O_EXCL, then unlinked at once: children reach it through the
// owner's /proc/PID/fd entry, so nothing is left behind when the owner dies, however it dies.
//
// Example:
//     auto s = vtime::Session::create({.epoch_ns = 1'700'000'000'000'000'000});
//     setenv("VTIME_SESSION", s.attach_spec().c_str(), 1);   // for the children
//     vtime::TimePoint t = s.now();                              // frozen at origin
#pragma once

#include <vtime/abi.h>
#include <vtime/time.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vtime {

// 2024-01-01T00:00:00Z: a fixed default so runs are reproducible.
inline constexpr int64_t kDefaultEpochNs = 1704067200LL * 1000000000LL;
// CLOCK_MONOTONIC reads 100000 s (a machine up for a day) at virtual time 0.
inline constexpr int64_t kDefaultMonoOriginNs = 100000LL * 1000000000LL;

inline constexpr const char* kSessionEnv = "VTIME_SESSION";

struct SessionOptions {
  int64_t epoch_ns = kDefaultEpochNs;
  int64_t mono_origin_ns = kDefaultMonoOriginNs;
  // The CPU-time model the wrapped processes apply (vtime/cpu_model.h); zero by default here,
  // the CLI's default is chosen there.
  abi::CpuModel cpu_model = abi::kCpuZero;
  int64_t cpu_cost_ns = 0;     // kCpuCalls: virtual cost of one charged call
  int64_t cpu_quantum_ns = 0;  // kCpuCalls: a thread pays its debt once it reaches this
  int64_t cpu_burst_calls = 0; // kCpuCalls: free charged calls per thread and instant
  int64_t sleep_latency_ns = 0;  // a sleep ends this long after its deadline (abi::Header)
  int64_t timer_slack_ns = 0;    // every timed wait ends later by Linux's slack (abi::Header)
};

// Attach failures carry a one-line reason meant for the user.
class SessionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Session {
 public:
  static Session create(const SessionOptions& opts = {});
  // spec is "/proc/PID/fd/N" (what attach_spec() returns). Throws SessionError.
  static Session attach(std::string_view spec);

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  // What children put in VTIME_SESSION to attach.
  std::string attach_spec() const;
  bool is_owner() const;

  abi::Segment& segment() const { return *seg_; }
  abi::Header& header() const { return seg_->header; }

  // The virtual now. A few atomic loads, no system call while the clock is frozen.
  TimePoint now() const { return read_clock(seg_->header.clock); }
  int64_t epoch_ns() const { return seg_->header.clock.epoch_ns; }
  int64_t mono_origin_ns() const { return seg_->header.clock.mono_origin_ns; }

  static TimePoint read_clock(const abi::ClockState& c);

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  abi::Segment* seg_ = nullptr;
};

int64_t real_monotonic_ns();

// read_clock's path for a running clock (out of line: the frozen path stays a few loads).
TimePoint read_running_clock(const abi::ClockState& c);

inline TimePoint Session::read_clock(const abi::ClockState& c) {
  for (;;) {
    // Acquire loads keep the second read of seq after the data (no fences: TSan cannot model them).
    uint64_t s1 = c.seq.load(std::memory_order_acquire);
    int64_t base = c.now_ns.load(std::memory_order_acquire);
    int64_t rate = c.rate_ppm.load(std::memory_order_acquire);
    if ((s1 & 1) != 0 || c.seq.load(std::memory_order_relaxed) != s1) continue;
    if (rate == 0) [[likely]] return TimePoint::from_ns(base);
    return read_running_clock(c);
  }
}

}  // namespace vtime
