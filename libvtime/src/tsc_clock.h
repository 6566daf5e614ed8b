// The running clock's real-time source: the CPU's time-stamp counter, calibrated against
// CLOCK_MONOTONIC by the controller (see abi::ClockState).
//
// Why: while the clock runs (--cpu-model real, or calls past its busy limit) every read of the
// wrapped tree must read real time. Through the vDSO that costs ~20 ns here plus vtime's seqlock
// (31.5 ns in all); the counter alone costs ~9 ns, and the conversion is one multiplication.
// The counter is used only where the kernel vouches for it: x86-64, flags constant_tsc and
// nonstop_tsc (one rate, never stopped in idle states), and a kernel clocksource that reads it
// (tsc, or kvm-clock whose stable mode is the same counter); VTIME_TSC=0 turns it off.
//
// Calibration needs no waiting: the controller keeps the pair (counter, CLOCK_MONOTONIC) taken
// when the calibration began and takes a new pair at each clock write; once the two are a
// millisecond or more apart, their ratio is the counter's rate (error ~ 30 ns / span, 3e-5 at
// the first millisecond, below 1e-7 after a second). Before that the clock reads CLOCK_MONOTONIC.
#pragma once

#include <cstdint>

namespace vtime::detail {

// The CPU's time-stamp counter (0 where there is none: the controller then never sets tsc_mult).
// The "memory" clobber keeps it between the seqlock's loads, where a clock read needs it.
inline uint64_t read_tsc() {
#if defined(__x86_64__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
  return (static_cast<uint64_t>(hi) << 32) | lo;
#else
  return 0;
#endif
}

// What a running clock adds to its base: the ticks since tsc_base at `mult` (32.32 fixed point);
// a counter read a little before the write that set tsc_base (out-of-order execution) adds nothing.
inline int64_t tsc_elapsed(uint64_t tsc, uint64_t tsc_base, uint64_t mult) {
  auto ticks = static_cast<int64_t>(tsc - tsc_base);
  if (ticks <= 0) return 0;
  __extension__ typedef unsigned __int128 uwide;
  return static_cast<int64_t>((static_cast<uwide>(ticks) * mult) >> 32);
}

class TscCalibration {
 public:
  // Decides whether the counter is usable (once per process) and takes the first pair.
  TscCalibration();

  // A pair taken now, for a clock write: the counter and CLOCK_MONOTONIC, as close together as
  // the two reads allow.
  struct Pair {
    uint64_t tsc = 0;
    int64_t mono_ns = 0;
  };
  Pair take() const;

  // tsc_mult for a clock running at rate_ppm, from the first pair to `now`: virtual ns per tick
  // in 32.32 fixed point; 0 when the counter is unusable, the span is still under a millisecond,
  // or the ratio is implausible (the caller then reads CLOCK_MONOTONIC).
  uint64_t mult(const Pair& now, int64_t rate_ppm) const;

  bool usable() const { return usable_; }

 private:
  bool usable_ = false;
  Pair first_;
};

}  // namespace vtime::detail
