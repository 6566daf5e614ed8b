// bench_clock_reads: the cost of one clock read (clock_gettime(CLOCK_MONOTONIC), gettimeofday,
// time) in whatever environment it runs in: natively, under `vtime exec` (the shim answers from
// shared memory) or under libfaketime. bench_clock_compare runs it all three ways and prints the
// ratios; it can also be run by hand (any Google Benchmark flag works).
//
// Timing: Google Benchmark's own timer reads std::chrono::steady_clock, which the shim makes
// virtual (and frozen: it would measure 0 s forever). Each benchmark therefore uses manual time:
// one iteration is a batch of kBatch calls timed with bench::raw_monotonic_ns(), a system call
// entered with inline assembly that no preloaded library can intercept. The same timer is used in
// every mode, so the modes compare fairly. Its own cost (one system call pair per batch, see
// BM_timer_overhead) is included in every figure, which slightly favours the slower modes.
#include "raw_clock.h"

#include <benchmark/benchmark.h>

#include <sys/time.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

constexpr int kBatch = 20000;

// Runs `call` kBatch times per iteration and reports the real time per call as counter
// "ns_per_call" (what bench_clock_compare reads) next to the per-batch manual time.
template <typename Call>
void run_batches(benchmark::State& state, Call call) {
  int64_t total_ns = 0;
  int64_t calls = 0;
  for (auto _ : state) {
    int64_t t0 = bench::raw_monotonic_ns();
    for (int i = 0; i < kBatch; ++i) call();
    int64_t t1 = bench::raw_monotonic_ns();
    state.SetIterationTime(static_cast<double>(t1 - t0) / 1e9);
    total_ns += t1 - t0;
    calls += kBatch;
  }
  state.counters["ns_per_call"] = calls > 0 ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0.0;
  state.SetItemsProcessed(calls);
}

void BM_clock_gettime_monotonic(benchmark::State& state) {
  run_batches(state, [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  });
}

void BM_gettimeofday(benchmark::State& state) {
  run_batches(state, [] {
    timeval tv;
    gettimeofday(&tv, nullptr);
    benchmark::DoNotOptimize(tv);
  });
}

void BM_time(benchmark::State& state) {
  run_batches(state, [] {
    time_t t = time(nullptr);
    benchmark::DoNotOptimize(t);
  });
}

#if defined(__x86_64__)
// The CPU's time-stamp counter alone: the floor of any clock read that must read real time
// (vtime's running clock reads it, abi::ClockState).
void BM_rdtsc(benchmark::State& state) {
  run_batches(state, [] {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    benchmark::DoNotOptimize(lo);
    benchmark::DoNotOptimize(hi);
  });
}
BENCHMARK(BM_rdtsc)->UseManualTime();
#endif

// The loop and the timer alone: what every other figure includes besides the call itself.
void BM_timer_overhead(benchmark::State& state) {
  run_batches(state, [] { benchmark::ClobberMemory(); });
}

BENCHMARK(BM_clock_gettime_monotonic)->UseManualTime();
BENCHMARK(BM_gettimeofday)->UseManualTime();
BENCHMARK(BM_time)->UseManualTime();
BENCHMARK(BM_timer_overhead)->UseManualTime();

// What the clocks looked like from inside this process, so that the driver can check that each
// mode really ran the way it claims (the shim: frozen virtual time at the session epoch).
void describe_clock() {
  timespec a{}, b{}, real{};
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 1000000; ++i) benchmark::ClobberMemory();  // ~1 ms of real work
  clock_gettime(CLOCK_MONOTONIC, &b);
  clock_gettime(CLOCK_REALTIME, &real);
  bool frozen = a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
  benchmark::AddCustomContext("clock_realtime_s", std::to_string(real.tv_sec));
  benchmark::AddCustomContext("clock_monotonic_frozen", frozen ? "true" : "false");
  int64_t raw = bench::raw_clock_ns(CLOCK_REALTIME) / 1000000000LL;
  benchmark::AddCustomContext("kernel_realtime_s", std::to_string(raw));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  describe_clock();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
