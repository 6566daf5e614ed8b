// The controller's part that decides when virtual time runs with real time rather than
// standing still, and writes the clock: the CPU-time model (vtime/cpu_model.h; `real` lets the
// clock run while the tree computes, `calls` once a thread computed in user mode past the busy
// limit with timed waits pending), the rewrites of a running clock as its counter's calibration
// improves, and the one warning when time has stood still too long while the tree runs.
//
// Why a part of its own: only it writes abi::ClockState (a seqlock; see write_clock), so the
// rule that the clock never goes back is kept in one place, and the model's real-time
// measurements (busy stretches, threads' CPU times) stay out of the idle decision, which they
// must not influence.
//
// Example (the controller's loop):
//     RunningClock clock(seg, proc, {.pids = ..., .advance = ..., .describe = ...});
//     clock.set_now(t);                   // an advance; never backwards
//     long cap_us = clock.on_busy();      // a look found the tree busy
//     clock.end_busy();                   // the tree is idle (or the look was interrupted)
#pragma once

#include <vtime/abi.h>
#include <vtime/controller.h>
#include <vtime/cpu_model.h>
#include <vtime/time.h>
#include <vtime/internal/proc_reader.h>

#include "tsc_clock.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace vtime::detail {

class RunningClock {
 public:
  // What the model needs of the rest of the controller (the loop supplies it).
  struct Tree {
    std::function<std::vector<pid_t>()> pids;         // the tree's processes
    std::function<int(TimePoint)> advance;             // wakes the waits due by then
    std::function<std::vector<ThreadReport>()> describe;  // for the warning
  };
  RunningClock(abi::Segment& seg, ProcReader& proc, Tree tree) : seg_(seg), proc_(proc), tree_(std::move(tree)) {}

  void set_model(const CpuModelOptions& cpu) { cpu_ = cpu; }
  // Sets the clock to t, never backwards, without waking anyone.
  void set_now(TimePoint t);
  // The clock runs at `factor` times real time from where it stands (0 stops it).
  void set_rate(double factor);
  // A look found the tree busy: applies the CPU-time model and the warning. Returns how long
  // (us) the caller may wait before looking again.
  long on_busy();
  // The busy stretch is over (the tree is idle, or the look was interrupted); a clock the model
  // let run stops.
  void end_busy();
  // Busy stretches in which `calls` let the clock run (ControllerStats::busy_flows).
  uint64_t busy_flows() const { return busy_flows_; }

 private:
  // The flowing clock's deadlines passed: wakes them; returns the next wait's budget (us).
  long run_due_waits(int64_t real);
  // (utime, stime) of every thread of the tree.
  std::map<pid_t, std::pair<uint64_t, uint64_t>> cpu_times();
  // calls: the thread of the tree that computed in user mode, without system calls, for most of
  // the last half busy limit (a spin on memory, CPython's bytecode loop holding the GIL), 0 if
  // none did (the first call starts the window): only such a computation lets the clock run; a
  // program starting up, busy in system calls and page faults, does not.
  pid_t user_mode_spin(int64_t real);
  // Says once per session that the clock began to run with real time because of `spinner`.
  void warn_busy_flow(pid_t spinner, int64_t real_now);
  void warn_time_stands_still(int64_t real_now);

  abi::Segment& seg_;
  ProcReader& proc_;
  Tree tree_;
  CpuModelOptions cpu_{.model = abi::kCpuZero};
  TscCalibration tsc_;          // the running clock's counter (tsc_clock.h)
  int64_t next_tsc_write_ = 0;  // real ns of the next rewrite of a running clock (on_busy)
  int64_t busy_since_ = 0;      // real ns when the current busy stretch of wait_idle began, 0 none
  int64_t busy_clock_ = 0;      // the virtual now then
  std::optional<uint64_t> busy_reads_;  // live clock reads half-way to the warning, none before
  // calls: per-thread (utime, stime) at the start of the current window of the busy limit.
  std::map<pid_t, std::pair<uint64_t, uint64_t>> spin_sample_;
  int64_t spin_sample_at_ = 0;   // real ns of that sample, 0 none
  int64_t next_flow_check_ = 0;  // real ns of the next look for deadlines passed while flowing
  bool flowing_ = false;         // the clock runs because of the model
  bool warned_ = false;          // the "time stands still" warning was printed (once per session)
  uint64_t busy_flows_ = 0;
};

}  // namespace vtime::detail
