// bench_wake_latency: how long after Controller::advance_to a virtual sleeper is running again
// (issue 2, second benchmark; targets: median <= 20 us for one sleeper, and <= 5 ms for one
// advance that wakes 1,000 sleepers spread over 4 processes).
//
// The benchmark process owns a session and drives a tree of bench_sleeper processes (plain
// programs under the shim) with the same loop as `vtime exec`:
//     wait_idle -> next_deadline -> advance_to -> wait_idle -> ...
// Every sleeper thread writes the real time (raw CLOCK_MONOTONIC system call) at which it ran
// after its wake-up to a shared board; the latency is that minus the real time just before
// advance_to. Two controller behaviours after the advance are measured:
//   exec   straight back into wait_idle, scanning /proc while the sleepers wake (as vtime exec);
//          this is the figure judged against the targets
//   quiet  block on a futex until every sleeper reported, then wait_idle: the wake-up path alone,
//          without the controller's scans competing for the CPUs
//
// Usage: bench_wake_latency [--rounds-single N] [--rounds-many N]
// Exit status: 0 all targets met, 1 a target missed, 2 the benchmark could not run.
#include "futex_floor.h"
#include "raw_clock.h"
#include "stats.h"
#include "sleeper_tree.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

enum class AfterAdvance { kExec, kQuiet };

struct Sample {
  std::vector<double> advance_us;   // the advance_to call itself
  std::vector<double> wake_us;      // advance start -> each sleeper running
  std::vector<double> last_us;      // advance start -> the last sleeper of the round running
  std::vector<double> cycle_us;     // advance start -> tree idle again (one full controller cycle)
  std::vector<double> preempted;    // involuntary context switches of the controller in advance_to
  std::vector<double> empty_advance_us;  // advance_to() with nothing due (the slot-table scan)
  std::vector<double> next_deadline_us;  // next_deadline()
};

long involuntary_switches() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nivcsw;
}

// Runs `rounds` advances over a fresh tree. Returns false if the run went wrong.
bool run(const bench::TreeShape& shape, AfterAdvance mode, Sample& out) {
  bench::SleeperTree tree(shape);
  vtime::Controller& ctl = tree.controller();
  bench::SleeperBoard& board = tree.board();
  const uint32_t n = tree.sleepers();
  auto intr = tree.interrupt();
  if (ctl.wait_idle(intr) != vtime::IdleResult::kIdle) return false;
  for (int64_t r = 1; r <= shape.rounds; ++r) {
    auto next = ctl.next_deadline();
    if (!next || *next != tree.deadline(r)) {
      fprintf(stderr, "bench_wake_latency: round %lld: unexpected next deadline %lld\n", static_cast<long long>(r),
              next ? static_cast<long long>(next->ns()) : -1LL);
      return false;
    }
    uint32_t target = static_cast<uint32_t>(r) * n;
    board.done_target.store(target, std::memory_order_release);
    long sw0 = involuntary_switches();
    int64_t t0 = bench::raw_monotonic_ns();
    int woken = ctl.advance_to(*next);
    int64_t t1 = bench::raw_monotonic_ns();
    out.preempted.push_back(static_cast<double>(involuntary_switches() - sw0));
    if (woken != static_cast<int>(n)) {
      fprintf(stderr, "bench_wake_latency: round %lld: advance_to woke %d of %u\n", static_cast<long long>(r), woken, n);
      return false;
    }
    if (mode == AfterAdvance::kQuiet && !bench::wait_done(board, target, tree.remaining_ns())) {
      fprintf(stderr, "bench_wake_latency: round %lld: the sleepers did not all report\n", static_cast<long long>(r));
      return false;
    }
    if (ctl.wait_idle(intr) != vtime::IdleResult::kIdle) return false;
    int64_t t2 = bench::raw_monotonic_ns();
    if (board.done.load() != target) {
      fprintf(stderr, "bench_wake_latency: round %lld: idle with %u of %u wake-ups recorded\n",
              static_cast<long long>(r), board.done.load(), target);
      return false;
    }
    int64_t last = t0;
    for (uint32_t i = 0; i < n; ++i) {
      int64_t w = board.rec[i].woke_ns.load(std::memory_order_acquire);
      out.wake_us.push_back(static_cast<double>(w - t0) / 1e3);
      if (w > last) last = w;
    }
    out.advance_us.push_back(static_cast<double>(t1 - t0) / 1e3);
    out.last_us.push_back(static_cast<double>(last - t0) / 1e3);
    out.cycle_us.push_back(static_cast<double>(t2 - t0) / 1e3);
  }
  // The fixed costs of the controller's two table walks, with everything asleep and nothing due.
  for (int i = 0; i < 200; ++i) {
    int64_t t0 = bench::raw_monotonic_ns();
    auto next = ctl.next_deadline();
    int64_t t1 = bench::raw_monotonic_ns();
    int woken = ctl.advance_to(tree.session().now());
    int64_t t2 = bench::raw_monotonic_ns();
    if (!next || woken != 0) return false;
    out.next_deadline_us.push_back(static_cast<double>(t1 - t0) / 1e3);
    out.empty_advance_us.push_back(static_cast<double>(t2 - t1) / 1e3);
  }
  return true;
}

void print_row(const char* what, const std::vector<double>& v, double scale, const char* unit) {
  bench::Stats s = bench::stats_of(v);
  printf("  %-34s %9.1f %9.1f %9.1f %9.1f %9.1f  %s  (n=%zu)\n", what, s.min / scale, s.median / scale,
         s.p90 / scale, s.p99 / scale, s.max / scale, unit, s.n);
}

void print_sample(const char* title, const Sample& s, bool many) {
  printf("%s\n  %-34s %9s %9s %9s %9s %9s\n", title, "", "min", "median", "p90", "p99", "max");
  print_row("advance_to() call", s.advance_us, 1, "us");
  print_row(many ? "advance -> each sleeper running" : "advance -> sleeper running", s.wake_us, 1, "us");
  if (many) print_row("advance -> last sleeper running", s.last_us, 1e3, "ms");
  print_row("advance -> tree idle again", s.cycle_us, many ? 1e3 : 1, many ? "ms" : "us");
  print_row("controller preemptions in advance_to", s.preempted, 1, "  ");
  print_row("next_deadline() call", s.next_deadline_us, 1, "us");
  print_row("advance_to() waking nobody", s.empty_advance_us, 1, "us");
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rounds_single = 2000;
  int64_t rounds_many = 20;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--rounds-single") == 0 && i + 1 < argc) {
      rounds_single = atoll(argv[++i]);
    } else if (strcmp(argv[i], "--rounds-many") == 0 && i + 1 < argc) {
      rounds_many = atoll(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_wake_latency [--rounds-single N] [--rounds-many N]\n");
      return 2;
    }
  }
  // Each phase has its own real-time budget; together they stay well under a minute.
  bench::TreeShape single{.processes = 1, .threads_per_process = 1, .rounds = rounds_single,
                          .period_ns = 1000000000, .limit_ns = 12LL * 1000000000LL};
  bench::TreeShape many{.processes = 4, .threads_per_process = 250, .rounds = rounds_many,
                        .period_ns = 1000000000, .limit_ns = 12LL * 1000000000LL};
  Sample single_exec, single_quiet, many_exec, many_quiet;
  try {
    if (!run(single, AfterAdvance::kExec, single_exec) || !run(single, AfterAdvance::kQuiet, single_quiet) ||
        !run(many, AfterAdvance::kExec, many_exec) || !run(many, AfterAdvance::kQuiet, many_quiet)) {
      fprintf(stderr, "bench_wake_latency: a run failed\n");
      return 2;
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "bench_wake_latency: %s\n", e.what());
    return 2;
  }
  print_sample("1 sleeper, controller loop as in vtime exec:", single_exec, false);
  print_sample("1 sleeper, quiet controller (futex until the sleeper reported):", single_quiet, false);
  print_sample("1,000 sleepers in 4 processes, controller loop as in vtime exec:", many_exec, true);
  print_sample("1,000 sleepers in 4 processes, quiet controller:", many_quiet, true);
  // The same wake-up with no vtime (futex_floor.h): what the kernel alone costs on this machine.
  std::vector<double> floor_ms = bench::futex_wake_floor(many.processes, many.threads_per_process, 20);
  bench::Stats last = bench::stats_of(many_exec.last_us);
  double ratio = -1;
  if (!floor_ms.empty()) {
    bench::Stats f = bench::stats_of(floor_ms);
    printf("1,000 plain futex waiters in 4 processes, no vtime (the kernel's floor):\n");
    printf("  %-34s %9.1f %9.1f %9.1f %9.1f %9.1f  ms  (n=%zu)\n", "wake -> last waiter running", f.min, f.median,
           f.p90, f.p99, f.max, f.n);
    ratio = last.median / 1e3 / f.median;
    printf("  vtime / floor, medians: %.2f (vtime %.2f ms)\n", ratio, last.median / 1e3);
  }
  bool ok = bench::report_result("wake_latency_median", bench::stats_of(single_exec.wake_us).median, "us", "<=", 20);
  // Issue 12 restated the 1,000-sleeper target relative to the kernel's floor measured above.
  ok &= bench::report_result("wake_1000_sleepers_over_floor", ratio, "x", "<=", 1.25);
  return ok ? 0 : 1;
}
