// rewrite-demo [SECONDS]: sleeps SECONDS (default 3600) while a periodic thread ticks every
// 700 s, then prints what the clocks saw. Under `vtime exec` (after `vtime rewrite`) it ends at
// once with elapsed_ns=3600000000000 and ticks=5; without a session it really sleeps.
#include "c_probe.h"
#include "periodic.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3600.0;
  const auto t0 = std::chrono::steady_clock::now();
  const long long c0 = c_monotonic_ns();
  const std::time_t wall0 = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());

  Periodic ticker(std::chrono::seconds(700));
  ticker.start();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  c_nap_ns(0);
  const int ticks = ticker.stop();

  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
  const long long c_elapsed = c_monotonic_ns() - c0;
  char start[32];
  std::strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&wall0));
  std::printf("elapsed_ns=%lld c_elapsed_ns=%lld ticks=%d start=%s\n", static_cast<long long>(elapsed.count()),
              c_elapsed, ticks, start);
  return 0;
}
