// A real-time clock that no LD_PRELOAD library can see, for the benchmarks.
//
// Why: under the shim, clock_gettime(CLOCK_MONOTONIC), std::chrono::steady_clock and even
// syscall(SYS_clock_gettime, ...) answer with the virtual clock, which stays frozen while a
// program computes; libfaketime shifts them too. A benchmark that must time itself in real time
// in every mode enters the kernel with the `syscall` instruction itself: nothing in user space
// sits between it and the kernel's CLOCK_MONOTONIC. It costs a real system call (a few hundred
// nanoseconds on a VM), so the benchmarks read it only around batches of thousands of calls, or
// once per event when measuring microsecond latencies.
//
// Example:
//     int64_t t0 = bench::raw_monotonic_ns();
//     work();
//     int64_t elapsed = bench::raw_monotonic_ns() - t0;
#pragma once

#include <sys/syscall.h>
#include <time.h>

#include <cstdint>

namespace bench {

#if !defined(__x86_64__)
#error "bench/raw_clock.h enters the kernel with x86-64 inline assembly"
#endif

inline int64_t raw_clock_ns(clockid_t clk) {
  timespec ts{};
  long ret = 0;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(static_cast<long>(SYS_clock_gettime)), "D"(static_cast<long>(clk)), "S"(&ts)
                   : "rcx", "r11", "memory");
  if (ret != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Real CLOCK_MONOTONIC, straight from the kernel.
inline int64_t raw_monotonic_ns() { return raw_clock_ns(CLOCK_MONOTONIC); }

}  // namespace bench
