// bench_sleeper: the wrapped program of the wake-up and idle-detection benchmarks. It is an
// ordinary program (plain clock_nanosleep, no vtime header) that the benchmarks run under the
// shim (LD_PRELOAD=libvtime-shim.so, VTIME_SESSION=...), so they measure the product's real path.
//
// Usage: bench_sleeper BOARD_FD FIRST THREADS ROUNDS PERIOD_NS ORIGIN_NS
//   THREADS threads (the main thread is one of them) with board indices FIRST.. each sleep until
//   the absolute CLOCK_MONOTONIC instants ORIGIN_NS + r * PERIOD_NS, r = 1..ROUNDS. After each
//   wake-up a thread writes the real time (bench::raw_monotonic_ns) to its record on the board.
//   After the last round every thread sleeps until a virtual instant nobody advances to; the
//   benchmark kills the process. ROUNDS = 0 gives a tree that only sleeps (idle detection).
#include "sleeper_board.h"

#include <pthread.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Plan {
  bench::SleeperBoard* board;
  uint32_t first;
  uint32_t threads;
  int64_t rounds;
  int64_t period_ns;
  int64_t origin_ns;
};

Plan g_plan;

void sleep_until(int64_t abs_ns) {
  timespec ts{static_cast<time_t>(abs_ns / 1000000000LL), static_cast<long>(abs_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

void* sleeper(void* arg) {
  auto index = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(arg));
  bench::SleeperBoard& b = *g_plan.board;
  b.ready.fetch_add(1, std::memory_order_acq_rel);
  for (int64_t r = 1; r <= g_plan.rounds; ++r) {
    sleep_until(g_plan.origin_ns + r * g_plan.period_ns);
    bench::record_wake(b, index, bench::raw_monotonic_ns());
  }
  // Park: a deadline far beyond anything the benchmark advances to.
  for (;;) sleep_until(g_plan.origin_ns + (g_plan.rounds + 1000000) * g_plan.period_ns);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: bench_sleeper BOARD_FD FIRST THREADS ROUNDS PERIOD_NS ORIGIN_NS\n");
    return 2;
  }
  g_plan.board = bench::map_board(atoi(argv[1]));
  g_plan.first = static_cast<uint32_t>(atol(argv[2]));
  g_plan.threads = static_cast<uint32_t>(atol(argv[3]));
  g_plan.rounds = atoll(argv[4]);
  g_plan.period_ns = atoll(argv[5]);
  g_plan.origin_ns = atoll(argv[6]);
  if (!g_plan.board || g_plan.threads == 0 || g_plan.first + g_plan.threads > bench::kMaxSleepers ||
      g_plan.period_ns <= 0) {
    fprintf(stderr, "bench_sleeper: bad arguments\n");
    return 2;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 * 1024);
  for (uint32_t i = 1; i < g_plan.threads; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, sleeper, reinterpret_cast<void*>(static_cast<uintptr_t>(g_plan.first + i))) != 0) {
      fprintf(stderr, "bench_sleeper: cannot create thread %u\n", i);
      return 2;
    }
  }
  sleeper(reinterpret_cast<void*>(static_cast<uintptr_t>(g_plan.first)));
  return 0;
}
