// When virtual time runs with real time, and the clock's only writer (see running_clock.h).
#include "running_clock.h"

#include <vtime/session.h>

#include "proc_stat.h"
#include "waiter_kinds.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace vtime::detail {

namespace {

// How long the tree may keep virtual time still while it runs and timed waits are pending before
// vtime says so (once): long enough that no real program's burst of work reaches it.
constexpr int64_t kStillWarnNs = 3'000'000'000;

// Clock reads made so far by the live threads of the tree (abi::ThreadStat): a tree that reads
// the clock in a loop while it stands still is busy-waiting on it.
uint64_t live_clock_reads(abi::Segment& seg) {
  uint64_t n = 0;
  for (auto& t : seg.thread_stats) {
    if (t.state.load(std::memory_order_acquire) == 1) n += t.reads.load(std::memory_order_relaxed);
  }
  return n;
}

// utime and stime (clock ticks) of one thread, from /proc/PID/task/TID/stat; false if gone.
bool thread_cpu_times(pid_t pid, pid_t tid, uint64_t* utime, uint64_t* stime) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", static_cast<int>(pid), static_cast<int>(tid));
  std::string line = ProcReader::read_small(path);
  const char* c = proc_stat_field(line.c_str(), 14);
  if (!c || !*c) return false;
  char* end = nullptr;
  *utime = strtoull(c, &end, 10);  // field 14, then field 15
  *stime = strtoull(end, nullptr, 10);
  return true;
}

// The value the clock state `c` gives at the real instant `p` (the writer's own read_clock).
int64_t clock_value_at(const abi::ClockState& c, const TscCalibration::Pair& p) {
  int64_t base = c.now_ns.load(std::memory_order_relaxed);
  int64_t rate = c.rate_ppm.load(std::memory_order_relaxed);
  if (rate == 0) return base;
  if (uint64_t mult = c.tsc_mult.load(std::memory_order_relaxed); mult != 0) {
    return base + tsc_elapsed(p.tsc, c.tsc_base.load(std::memory_order_relaxed), mult);
  }
  __extension__ typedef __int128 wide;
  return base + static_cast<int64_t>(static_cast<wide>(p.mono_ns - c.real_base_ns.load(std::memory_order_relaxed)) *
                                     rate / 1000000);
}

// The clock's only writer: a seqlock write of (now, real base, counter base, rate). The clock
// continues from the value it had when seq became odd (raised to `at_least`): the real time is
// taken after that store is visible, so no reader that passed its check saw more, and a clock
// that stops or changes rate never goes back (abi::ClockState).
void write_clock(abi::ClockState& c, const TscCalibration& tsc, std::optional<TimePoint> at_least, int64_t rate_ppm) {
  uint64_t s = c.seq.load(std::memory_order_relaxed);
  c.seq.store(s + 1, std::memory_order_seq_cst);  // a full barrier on x86: visible before the reads below
#if defined(__x86_64__)
  __builtin_ia32_lfence();  // and the counter is not read ahead of it
#endif
  TscCalibration::Pair p = tsc.take();
  int64_t now = clock_value_at(c, p);
  if (at_least && at_least->ns() > now) now = at_least->ns();
  // Release stores: a reader that sees new data also sees the odd seq written before it.
  c.now_ns.store(now, std::memory_order_release);
  c.real_base_ns.store(p.mono_ns, std::memory_order_release);
  c.tsc_base.store(p.tsc, std::memory_order_release);
  c.tsc_mult.store(tsc.mult(p, rate_ppm), std::memory_order_release);
  c.rate_ppm.store(rate_ppm, std::memory_order_release);
  c.seq.store(s + 2, std::memory_order_release);
}

}  // namespace

void RunningClock::set_now(TimePoint t) {
  auto& c = seg_.header.clock;
  TimePoint cur = Session::read_clock(c);
  if (t > cur) write_clock(c, tsc_, t, c.rate_ppm.load(std::memory_order_relaxed));
}

void RunningClock::set_rate(double factor) {
  write_clock(seg_.header.clock, tsc_, std::nullopt, static_cast<int64_t>(factor * 1e6));
}

long RunningClock::on_busy() {
  int64_t real = real_monotonic_ns();
  auto& clk = seg_.header.clock;
  if (busy_since_ == 0) {
    busy_since_ = real;
    busy_clock_ = Session::read_clock(clk).ns();
    busy_reads_.reset();
  }
  if (!warned_ && !busy_reads_ && real - busy_since_ >= kStillWarnNs / 2) {
    busy_reads_ = live_clock_reads(seg_);  // the baseline for the warning, long before it is due
  }
  bool flow = false;
  pid_t spinner = 0;
  if (!flowing_ && cpu_.model == abi::kCpuReal) {
    flow = true;
  } else if (!flowing_ && cpu_.model == abi::kCpuCalls && cpu_.busy_limit_ns > 0 &&
             real - busy_since_ >= cpu_.busy_limit_ns / 2 && real >= next_flow_check_) {
    // Only a computation that keeps a timed waiter waiting moves time (a program starting up,
    // with nothing waiting on the clock, stays exact however long it computes).
    spinner = user_mode_spin(real);
    flow = spinner != 0 && earliest_deadline(seg_).has_value();
    next_flow_check_ = real + 1'000'000;  // look again in a millisecond
  }
  if (flow) {
    // From now on the clock runs with real time (scaled) until the tree is idle again.
    double rate = cpu_.model == abi::kCpuReal ? cpu_.scale : 1.0;
    write_clock(clk, tsc_, std::nullopt, static_cast<int64_t>(rate * 1e6));
    flowing_ = true;
    next_flow_check_ = 0;
    if (cpu_.model == abi::kCpuCalls && ++busy_flows_ == 1) warn_busy_flow(spinner, real);
  }
  if (real >= next_tsc_write_ && tsc_.usable() && clk.rate_ppm.load(std::memory_order_relaxed) != 0) {
    // A running clock is rewritten where it stands (no reader sees a step): its first write may
    // have come before the counter's calibration had a millisecond (the clock then reads
    // CLOCK_MONOTONIC), and a longer span refines the counter's rate.
    write_clock(clk, tsc_, std::nullopt, clk.rate_ppm.load(std::memory_order_relaxed));
    next_tsc_write_ = real + (clk.tsc_mult.load(std::memory_order_relaxed) == 0 ? 1'000'000 : 1'000'000'000);
  }
  long cap = 2000;
  if (flowing_ && real >= next_flow_check_) cap = run_due_waits(real);
  if (!warned_ && busy_reads_ && real - busy_since_ >= kStillWarnNs && Session::read_clock(clk).ns() == busy_clock_) {
    warn_time_stands_still(real);
  }
  return cap;
}

long RunningClock::run_due_waits(int64_t real) {
  // Waits whose deadline the running clock passed are due now, busy tree or not.
  auto& clk = seg_.header.clock;
  long cap = 2000;
  TimePoint t = Session::read_clock(clk);
  std::optional<TimePoint> next = earliest_deadline(seg_);
  for (int round = 0; round < 2 && next && *next <= t; ++round) {
    tree_.advance(t);
    next = earliest_deadline(seg_);
  }
  int64_t rate = clk.rate_ppm.load(std::memory_order_relaxed);
  if (next && rate > 0) {
    __extension__ typedef __int128 wide;
    int64_t real_left = static_cast<int64_t>(static_cast<wide>((*next - t).ns()) * 1000000 / rate);
    cap = static_cast<long>(std::clamp<int64_t>(real_left / 1000, 20, 2000));
  }
  next_flow_check_ = real + static_cast<int64_t>(cap) * 1000;
  return cap;
}

std::map<pid_t, std::pair<uint64_t, uint64_t>> RunningClock::cpu_times() {
  std::map<pid_t, std::pair<uint64_t, uint64_t>> out;
  std::vector<pid_t> tids;
  for (pid_t pid : tree_.pids()) {
    if (!proc_.thread_ids(pid, 0, -1, tids)) continue;  // a fresh listing; the samples are not needed
    for (pid_t tid : tids) {
      uint64_t u = 0, st = 0;
      if (thread_cpu_times(pid, tid, &u, &st)) out[tid] = {u, st};
    }
  }
  return out;
}

pid_t RunningClock::user_mode_spin(int64_t real) {
  int64_t half = cpu_.busy_limit_ns / 2;
  if (spin_sample_at_ == 0) {
    spin_sample_ = cpu_times();
    spin_sample_at_ = real;
    return 0;
  }
  if (real - spin_sample_at_ < half) return 0;
  auto now_times = cpu_times();
  double ticks = static_cast<double>(real - spin_sample_at_) / 1e9 * static_cast<double>(sysconf(_SC_CLK_TCK));
  pid_t spin = 0;
  uint64_t most = 0;
  for (auto& [tid, t] : now_times) {
    auto it = spin_sample_.find(tid);
    if (it == spin_sample_.end()) continue;
    uint64_t du = t.first - it->second.first, ds = t.second - it->second.second;
    // On the cpu most of the window, and at least 19 ticks of 20 of it in user mode.
    if (static_cast<double>(du) >= 0.6 * ticks && ds * 19 <= du && du > most) {
      spin = tid;
      most = du;
    }
  }
  spin_sample_ = std::move(now_times);  // the next window starts here
  spin_sample_at_ = real;
  return spin;
}

void RunningClock::end_busy() {
  busy_since_ = 0;
  next_flow_check_ = 0;
  spin_sample_at_ = 0;
  spin_sample_.clear();
  if (flowing_) {
    write_clock(seg_.header.clock, tsc_, std::nullopt, 0);
    flowing_ = false;
  }
}

void RunningClock::warn_busy_flow(pid_t spinner, int64_t real_now) {
  char path[64], comm[64] = "?";
  snprintf(path, sizeof path, "/proc/%d/comm", static_cast<int>(spinner));
  if (FILE* f = fopen(path, "re")) {
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
    fclose(f);
  }
  auto next = earliest_deadline(seg_);
  fprintf(stderr,
          "vtime: tid %d (%s) has computed in user mode, with no call the CPU-time model charges, for %.0f ms of real "
          "time while timed waits are pending (the earliest at %.9f s): the clock runs with real time until the tree "
          "is idle again (--cpu-busy-limit), so from here on this run's instants depend on the machine's speed; "
          "later such stretches are counted by --stats\n",
          static_cast<int>(spinner), comm, static_cast<double>(real_now - busy_since_) / 1e6,
          next ? static_cast<double>(next->ns()) / 1e9 : 0.0);
}

void RunningClock::warn_time_stands_still(int64_t real_now) {
  auto next = earliest_deadline(seg_);
  uint64_t reads = busy_reads_ ? live_clock_reads(seg_) - *busy_reads_ : 0;
  // Nothing waits on time and nobody reads the clock: a long computation, not a busy-wait.
  if (!next && reads < 1000) return;
  warned_ = true;
  std::string running;
  for (auto& t : tree_.describe()) {
    if (t.state != 'R') continue;
    if (!running.empty()) running += ", ";
    running += "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " (" + t.comm + ")";
  }
  if (running.empty()) running = "a thread of the tree";
  const char* hint = cpu_.model == abi::kCpuZero
                         ? "--cpu-model calls (the default of vtime exec and run) lets clock reads and polls cost time; "
                           "--cpu-model real "
                           "lets the clock run while the tree computes"
                         : "--cpu-model real lets the clock run while the tree computes";
  char what[160];
  if (next) {
    snprintf(what, sizeof what, "running while the earliest pending deadline is %.9f s", static_cast<double>(next->ns()) / 1e9);
  } else {
    snprintf(what, sizeof what, "reading the clock (%llu reads in the last %.1f s)", static_cast<unsigned long long>(reads),
             static_cast<double>(kStillWarnNs / 2) / 1e9);
  }
  fprintf(stderr,
          "vtime: virtual time has stood still at %.9f s for %.1f s of real time: %s keep%s %s "
          "(a busy-wait?); %s\n",
          static_cast<double>(busy_clock_) / 1e9, static_cast<double>(real_now - busy_since_) / 1e9, running.c_str(),
          running.find(',') == std::string::npos ? "s" : "", what, hint);
}

}  // namespace vtime::detail
