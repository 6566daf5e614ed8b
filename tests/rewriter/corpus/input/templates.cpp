// Calls inside templates: non-dependent ones are rewritten; dependent ones whose callee is
// still known (an unresolved overload set of library functions) too; calls through a
// dependent type cannot be resolved and are reported.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <thread>

#include "pragma_once.h"

template <class T>
void nap_fixed(T) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  usleep(1);
}

template <class Duration>
void nap_for(Duration d) {
  std::this_thread::sleep_for(d);
}

template <class Clock>
typename Clock::time_point read_clock() {
  return Clock::now();
}

template <class Cv, class Lock>
void wait_a_bit(Cv& cv, Lock& lock) {
  cv.wait_for(lock, std::chrono::milliseconds(1));
}

int main() {
  nap_fixed(0);
  pragma_once_nap();
  nap_for(std::chrono::microseconds(5));
  auto t = read_clock<std::chrono::steady_clock>();
  (void)t;
  return 0;
}
