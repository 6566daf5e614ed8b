// The controller side of a session: decides when the wrapped tree is idle and moves the clock.
//
// What it is for: `vtime exec` and the broker own the clock. They wait until every thread of the
// wrapped process tree is blocked (idle), then advance the clock to the earliest pending deadline,
// which wakes exactly the waiters due by then, in deadline order. Idleness is exact, not guessed:
// every thread shows a non-running state in /proc, two consecutive scans see identical per-thread
// scheduler counters, no wake-up is pending and no registration changed in between. Where the
// kernel lets it load an eBPF program (vtime/tree_watch.h), the kernel counts the tree's active
// threads instead and a decision costs a few loads instead of /proc reads.
//
// Example:
//     vtime::Controller ctl(session, child_pid);
//     while (ctl.wait_idle([&] { return child_exited(); }) == vtime::IdleResult::kIdle) {
//       auto next = ctl.next_deadline();
//       if (!next) { report(ctl.describe()); break; }   // blocked forever
//       ctl.advance_step(*next);
//     }
#pragma once

#include <vtime/cpu_model.h>
#include <vtime/session.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vtime {

enum class IdleResult { kIdle, kInterrupted };

struct ThreadReport {
  pid_t pid = 0;
  pid_t tid = 0;
  std::string comm;
  char state = '?';
  std::string waits_on;  // "nanosleep until 3600.000000000 s", "read (not intercepted)", ...
  // Set when the thread is in a system call with a real timeout that vtime does not control
  // (a raw call the shim never sees, a form the tracer cannot rewrite): "select with a real
  // timeout of 1.000000000 s". Such a tree is not deadlocked: its clock just cannot move.
  std::string real_timeout;
};

struct ControllerStats {
  uint64_t advances = 0;
  uint64_t wakeups = 0;
  uint64_t idle_decisions = 0;
  uint64_t handovers = 0;  // the serial gate gave the tree to a held process (set_serial)
  uint64_t scans = 0;
  // Idle decisions use the kernel's count (vtime/tree_watch.h), not /proc. False from the start
  // without a watch, and from the moment the controller gave it up (logged).
  bool kernel_count = false;
  // Busy stretches in which the `calls` model let the clock run with real time (the tree computed
  // past the busy limit with timed waits pending): each makes the run depend on real time.
  uint64_t busy_flows = 0;
  // Waits of traced images answered by the controller itself (docs/tracer.md "Notified sleeps"):
  // sleeps, Go's timed epoll waits.
  uint64_t notified = 0;
  // Sleeps of Go's sysmon ended early, at an idle point, so that it hands over the processor of a
  // goroutine blocked in a system call, whose timers wait on it (docs/tracer.md).
  uint64_t sysmon_nudges = 0;
};

class TreeWatch;

class Controller {
 public:
  // With `watch` (see vtime/tree_watch.h) that adopted `root`, idle decisions use the kernel's
  // count of the tree's active threads; otherwise they read /proc.
  Controller(Session& session, pid_t root, TreeWatch* watch = nullptr);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Blocks until the tree is idle or `interrupted()` returns true (checked between scans).
  // A root that has exited keeps the tree busy until its owner reaps it (its exit is on the way,
  // never a deadlock): when the root may exit, `interrupted` is where the owner reaps it.
  IdleResult wait_idle(const std::function<bool()>& interrupted);
  // Earliest deadline among pending waits of live threads; nullopt if none.
  std::optional<TimePoint> next_deadline();
  // Sets the clock to t (never backwards) and wakes every waiter due at or before t, in
  // deadline order (waiters due at one instant are woken together). Returns how many it woke.
  int advance_to(TimePoint t);
  // One step of an advance to t, for callers that let the tree settle (wait_idle) between steps
  // and call it with t = next_deadline(): sets the clock to t and wakes, of the waiters due by
  // then, those with the earliest deadline of one process only, the one whose turn comes first.
  // Processes due at one instant thus run one after another, each until the tree is idle, in an
  // order that real-time races cannot change: not by pid (pids wrap around, and children of
  // different parents race for them) but the root first, then by rank among the parent's forks
  // and lineage (abi::ProcessSlot) for every process the shim's wrappers or the tracer
  // announced, the others (children of glibc-internal clones) after them, by pid. Threads of
  // one process due at one instant are still woken together. Returns how many it woke (like
  // advance_to, not counting a language runtime's housekeeping waits: abi::kTracerHousekeeping).
  int advance_step(TimePoint t);
  // Sets the clock to t (never backwards) without waking anyone (a message at t is delivered
  // before the timers due at t fire).
  void set_now(TimePoint t);
  // Lets the clock run at `factor` times real time from now on (0 freezes it).
  void set_rate(double factor);
  // The controller's part of the CPU-time model (vtime/cpu_model.h; the wrapped processes' part
  // comes with the session): while wait_idle finds the tree busy, `real` lets the clock run at
  // cpu.scale x real time, `calls` once the tree has computed for cpu.busy_limit_ns, waking the
  // waits it passes; it stops when the tree is idle. Whatever the model, a tree that keeps time
  // still for 3 s of real time while it runs and timed waits are pending gets one warning on
  // stderr. Default: zero (exact event semantics, the warning only).
  void set_cpu_model(const CpuModelOptions& cpu);
  // Also count the other threads of this process (e.g. ZeroMQ's I/O threads carrying messages
  // to and from the tree) in idle decisions, so a message in flight is never missed.
  void watch_own_threads(bool on);
  // One runnable process at a time (docs/design.md "Serialised processes"): a traced process
  // whose wait ends while another has the tree is held until an idle point, where wait_idle
  // hands the tree to the held process whose turn comes first, as in advance_step (and looks
  // for idleness again); advances hand it to the process they wake. Processes at one virtual instant then read what
  // the others sent in an order no real-time race decides. Covers traced processes (static
  // and Go programs); processes under the shim are not held. Off by default.
  void set_serial(bool on);
  // Every thread of the tree with what it waits on, for the deadlock report.
  std::vector<ThreadReport> describe();
  // Pids of every live process of the tree (registered or found as descendants).
  std::vector<pid_t> tree_pids();
  // True when every thread of the root has exited and it waits to be reaped (its owner's job).
  bool root_exited();
  // Frees the table slots of the tree's processes and threads that have died. wait_idle() does
  // it as it looks; a caller that never waits for idleness (the broker's timeout policy) must
  // call it now and then, or a tree that keeps starting processes (Slurm: a slurmstepd per job)
  // fills the process table.
  void reclaim_dead();
  ControllerStats stats() const;

 private:
  IdleResult look_until_idle(const std::function<bool()>& interrupted);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

const char* reason_name(uint32_t reason);
// "pid P tid T (comm) [S]: what it waits on", one line of a deadlock report.
std::string to_string(const ThreadReport& t);

}  // namespace vtime
