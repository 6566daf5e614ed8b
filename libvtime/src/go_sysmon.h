// The controller's part that decides which of Go's sysmon sleeps must end early, and when they
// count as deadlines (docs/tracer.md "Go's sysmon and a goroutine in a blocking system call").
//
// Why: Go keeps a goroutine's timers on its processor (P), and a goroutine in a blocking system
// call (wait4 under os/exec, a read of a blocking descriptor, a cgo call) keeps its P: only
// sysmon's next look hands that P over ("retake", at its second look at the call), and then a
// thread waits in the network poller until the earliest timer, a deadline that counts. Sysmon
// looks between sleeps of 20 us to 10 ms, which are housekeeping (they do not stop the clock):
// left alone, such a process's timers waited for another process's deadline (a 1.2 s context
// timeout on `sleep 5` fired at 5 s). So at an idle point, a process with no thread in its poller
// and one holding a P in a blocking call has its sysmon sleep ended early, at the same instant
// (Go's usleep ignores how long it slept; the controller's loop does the waking): the P is
// retaken without time passing, and the timers fire at their deadlines, not at one of sysmon's
// instants (a race). Bounded per instant: with more than one P, sysmon retakes only after 10 ms
// of a call, so past the bound its sleeps count as deadlines (idle_deadline). A cgo call blocked
// on a C mutex looks like the runtime's own wait: such a program's timers still wait.
//
// Example (the controller's loop):
//     GoSysmon sysmon(seg, proc);
//     if (sysmon.may_nudge(now)) for (auto& s : sysmon.needing(abi::kNoDeadline)) end_early(s);
//     next = sysmon.idle_deadline(earliest_deadline(seg));
#pragma once

#include <vtime/abi.h>
#include <vtime/internal/proc_reader.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace vtime::detail {

class GoSysmon {
 public:
  GoSysmon(abi::Segment& seg, ProcReader& proc) : seg_(seg), proc_(proc) {}

  // A pending sleep of sysmon (a housekeeping sleep of a traced Go process), by waiter slot.
  struct Sleep {
    pid_t pid;
    int64_t deadline;
    uint32_t index;
    uint64_t seq;
    bool operator<(const Sleep& o) const { return pid != o.pid ? pid < o.pid : deadline < o.deadline; }
  };
  // The pending sysmon sleeps due before `before` whose process has no thread in its poller and
  // one holding a P in a blocking call: those the process's timers wait for. Valid until the
  // next call.
  const std::vector<Sleep>& needing(int64_t before);
  // Whether another nudge may be made at virtual instant `now`: at most kNudgesPerInstant.
  bool may_nudge(int64_t now);
  // A nudge was made (sleeps ended early) at the instant may_nudge last saw.
  void nudged();
  int nudges_at_this_instant() const { return nudges_; }
  // The deadline an idle point stops at, given the earliest deadline of the table: it, or an
  // earlier sleep of sysmon that must run for its process's timers once the nudges gave up.
  std::optional<TimePoint> idle_deadline(std::optional<TimePoint> earliest);

  static constexpr int kNudgesPerInstant = 8;
  // Sysmon's looks that retake a P held in a call: the first notes the call, the second takes.
  static constexpr int kLooksToRetake = 2;

 private:
  // Process pid has a thread in its network poller with a timeout (Go's netpoll, an epoll wait
  // that is not housekeeping): the poller waits until the earliest timer of every P, those of a
  // P held in a system call included, and runs them when it wakes.
  bool has_poller_wait(pid_t pid) const;
  // A thread of pid holds a P in a blocking call (see go_sysmon.cpp).
  bool holds_processor(pid_t pid);
  // A thread of pid holds a P in a timed wait of the table (a charged call, a raw sleep) whose
  // P sysmon has not yet had kLooksToRetake looks at: nudged even with a poller (see .cpp).
  bool held_wait_unretaken(pid_t pid);

  // A timed wait holding a P, by waiter slot and its seq, and the nudges made for it.
  struct Held {
    uint32_t index;
    uint64_t seq;
    int nudges;
  };

  abi::Segment& seg_;
  ProcReader& proc_;
  std::vector<Sleep> sleeps_;
  std::vector<pid_t> waiting_tids_;
  std::vector<pid_t> tids_;
  std::vector<Held> held_;
  std::vector<size_t> counted_;  // entries of held_ the last needing() nudges for
  int64_t nudged_at_ = -1;
  int nudges_ = 0;
};

}  // namespace vtime::detail
