// --decision-cost: the real CPU time an example scheduler spends on each decision, so that a
// sync policy that gives the scheduler less real time than that (vtime run --sync timeout with a
// small --timeout) shows late decisions. Shared by the C++ examples.
#pragma once

#include <time.h>

#include <chrono>

namespace examples {

// Spins until this thread has used `cost` of CPU time. CLOCK_THREAD_CPUTIME_ID measures real
// computation, so the time spent here is real even when the scheduler's clocks are virtual.
inline void spend_cpu(std::chrono::nanoseconds cost) {
  if (cost <= std::chrono::nanoseconds::zero()) return;
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  };
  const auto end = cpu_now() + cost;
  while (cpu_now() < end) {
  }
}

// --decision-cost MS as a duration (the option takes fractional milliseconds).
inline std::chrono::nanoseconds decision_cost(double ms) {
  return std::chrono::nanoseconds(static_cast<long long>(ms * 1e6));
}

}  // namespace examples
