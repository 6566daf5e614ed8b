// Small facts about waiter slots and blocked threads that more than one of the controller's
// parts need (controller.cpp, idle_look.cpp, sleeper_proofs.cpp, waker.cpp, running_clock.cpp,
// tree_report.cpp, go_sysmon.cpp).
#pragma once

#include <vtime/abi.h>
#include <vtime/internal/slots.h>
#include <vtime/session.h>
#include <vtime/time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

namespace vtime::detail {

// A language runtime's own wait (abi::kTracerHousekeeping): serviced when time moves anyway.
inline bool housekeeping(const abi::WaiterSlot& w) {
  return w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer &&
         (w.tracer_flags.load(std::memory_order_relaxed) & abi::kTracerHousekeeping) != 0;
}

// The controller's way out of abi::kWaking: false when the owner changed the slot meanwhile (it
// ended or re-armed its wait), which then stays as the owner left it.
inline bool finish_waking(abi::WaiterSlot& w, abi::SlotState to) {
  uint32_t waking = abi::kWaking;
  return w.state.compare_exchange_strong(waking, to, std::memory_order_seq_cst);
}

// From when an advance may end a wait whose deadline is `d`: its timer slack is a range
// (abi::WaiterSlot::early_ns, timer_slack.h). Time stops only at `d` (earliest_deadline).
inline int64_t soft_deadline(const abi::WaiterSlot& w, int64_t d) {
  return d - static_cast<int64_t>(w.early_ns.load(std::memory_order_relaxed));
}

// Earliest deadline among pending (Waiting) slots. Housekeeping waits count only when nothing
// else is pending: Go's runtime decides between its short and its long sleeps by racing its own
// threads, so a deadline of theirs is not a deterministic instant to stop at; they are woken
// with the next advance instead (Waker), which no Go program can tell from a slow kernel.
// A wait whose slack's range the clock has entered is due now: the advance that brought the
// clock there expired it, in a later step of the same instant (advance_step wakes the earliest
// deadline's waits first).
inline std::optional<TimePoint> earliest_deadline(abi::Segment& seg) {
  const int64_t now = Session::read_clock(seg.header.clock).ns();
  int64_t best = abi::kNoDeadline, best_housekeeping = abi::kNoDeadline;
  for (uint32_t i = 0, n = waiter_limit(seg); i < n; ++i) {
    auto& w = seg.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (d > now && soft_deadline(w, d) <= now) d = now;
    if (housekeeping(w)) {
      best_housekeeping = std::min(best_housekeeping, d);
    } else {
      best = std::min(best, d);
    }
  }
  if (best == abi::kNoDeadline) best = best_housekeeping;
  if (best == abi::kNoDeadline) return std::nullopt;
  return TimePoint::from_ns(best);
}

// A thread state letter (/proc/TID/stat) that holds the clock: R running/runnable, D
// uninterruptible (I/O in progress: it will finish by itself), T/t stopped (a debugger or
// SIGSTOP holds the clock), W paging.
inline bool running_state(char s) { return s == 'R' || s == 'D' || s == 'T' || s == 't' || s == 'W'; }

// A /proc/TID/syscall line of a blocked thread: its call's number and six arguments.
struct SyscallLine {
  long nr = -1;
  uint64_t a[6] = {};
};
// False for "running" (or an unreadable line).
inline bool parse_syscall_line(const char* line, SyscallLine& out) {
  if (*line < '0' || *line > '9') return false;
  char* end = nullptr;
  out.nr = strtol(line, &end, 10);
  for (auto& v : out.a) v = strtoull(end, &end, 16);
  return true;
}

}  // namespace vtime::detail
