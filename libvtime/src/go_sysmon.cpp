// Go's sysmon sleeps (see go_sysmon.h).
#include "go_sysmon.h"

#include "waiter_kinds.h"

#include <vtime/internal/slots.h>
#include <vtime/session.h>

#include <linux/futex.h>
#include <sys/syscall.h>

#include <algorithm>

namespace vtime::detail {

namespace {
// A wait of the table in which a Go thread holds its P: a timed wait of the program's own (a
// charged call, a raw nanosleep or ppoll, a cgo call's wait through the shim), not one of the
// runtime's own idle waits nor a payment of the CPU-time model (see holds_processor).
bool holds_p(const abi::WaiterSlot& w) {
  if (w.is_timer.load(std::memory_order_relaxed) != 0) return false;
  const uint32_t reason = w.reason.load(std::memory_order_relaxed);
  return !(w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer &&
           (housekeeping(w) || reason == abi::kReasonEpoll || reason == abi::kReasonCpu));
}
}  // namespace

const std::vector<GoSysmon::Sleep>& GoSysmon::needing(int64_t before) {
  sleeps_.clear();
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting || !housekeeping(w) ||
        w.reason.load(std::memory_order_relaxed) != abi::kReasonSleep) {
      continue;
    }
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (d < before) sleeps_.push_back({w.pid.load(std::memory_order_relaxed), d, i, w.seq.load(std::memory_order_acquire)});
  }
  counted_.clear();
  if (sleeps_.empty()) return sleeps_;
  // Forget the holds that ended (their slot was reused or released).
  std::erase_if(held_, [&](const Held& h) {
    auto& w = seg_.waiters[h.index];
    return w.state.load(std::memory_order_acquire) != abi::kWaiting || w.seq.load(std::memory_order_acquire) != h.seq;
  });
  std::sort(sleeps_.begin(), sleeps_.end());
  pid_t decided = 0;
  bool needs = false;
  std::erase_if(sleeps_, [&](const Sleep& s) {
    if (s.pid != decided) {
      decided = s.pid;
      needs = held_wait_unretaken(s.pid) || (!has_poller_wait(s.pid) && holds_processor(s.pid));
    }
    return !needs;
  });
  return sleeps_;
}

void GoSysmon::nudged() {
  ++nudges_;
  for (size_t i : counted_) ++held_[i].nudges;
  counted_.clear();
}

// Why even with a poller: the poller runs the timers of a held P, not the goroutines readied on
// it before the call (its run queue), which natively run once sysmon retakes the P, 20 us into
// the call. Left to sysmon's own sleeps, whose wake-ups are housekeeping (the advance that ends
// the call ends them too), whether such a goroutine ran during the call or after it was a race
// in real time between sysmon and the returning thread (etcd's start-up under a charged fsync:
// a ticker created at 4 or 6 ms). Two nudges per held wait make it run during the call, always.
bool GoSysmon::held_wait_unretaken(pid_t pid) {
  bool any = false;
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting || w.pid.load(std::memory_order_relaxed) != pid ||
        !holds_p(w)) {
      continue;
    }
    const uint64_t seq = w.seq.load(std::memory_order_acquire);
    auto it = std::find_if(held_.begin(), held_.end(), [&](const Held& h) { return h.index == i && h.seq == seq; });
    if (it == held_.end()) it = held_.insert(held_.end(), Held{i, seq, 0});
    if (it->nudges < kLooksToRetake) {
      counted_.push_back(static_cast<size_t>(it - held_.begin()));
      any = true;
    }
  }
  return any;
}

bool GoSysmon::may_nudge(int64_t now) {
  if (seg_.header.traced.load(std::memory_order_acquire) == 0) return false;
  if (now != nudged_at_) {
    nudged_at_ = now;
    nudges_ = 0;
  }
  return nudges_ < kNudgesPerInstant;
}

std::optional<TimePoint> GoSysmon::idle_deadline(std::optional<TimePoint> earliest) {
  if (!earliest || seg_.header.traced.load(std::memory_order_acquire) == 0) return earliest;
  for (const Sleep& s : needing(earliest->ns())) earliest = std::min(*earliest, TimePoint::from_ns(s.deadline));
  return earliest;
}

bool GoSysmon::has_poller_wait(pid_t pid) const {
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) == abi::kWaiting && !housekeeping(w) &&
        w.reason.load(std::memory_order_relaxed) == abi::kReasonEpoll && w.pid.load(std::memory_order_relaxed) == pid &&
        w.deadline.load(std::memory_order_relaxed) != abi::kNoDeadline) {
      return true;
    }
  }
  return false;
}

// A timed wait of the program's own (a raw nanosleep or ppoll, a cgo call's wait through the
// shim), or a system call other than those the Go runtime waits in when it has nothing to do
// (futex, epoll, its nanosleep): wait4, a read of a blocking descriptor, a C condition variable.
// A thread of a C library's own (cgo) looks the same: the nudge then finds nothing to retake,
// and sysmon parks.
bool GoSysmon::holds_processor(pid_t pid) {
  waiting_tids_.clear();
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting || w.pid.load(std::memory_order_relaxed) != pid ||
        w.is_timer.load(std::memory_order_relaxed) != 0) {
      continue;
    }
    // The runtime's own waits, and the CPU-time model's payments made by the injected clock
    // code (abi::kReasonCpu), where Go sees a goroutine running, which sysmon does not retake
    // (a cgo call's payment through the shim is in a system call for Go: it holds its P).
    if (!holds_p(w)) {
      waiting_tids_.push_back(w.tid.load(std::memory_order_relaxed));  // its call was rewritten: not in /proc
      continue;
    }
    return true;
  }
  if (!proc_.thread_ids(pid, 0, -1, tids_)) return false;
  for (pid_t tid : tids_) {
    if (std::find(waiting_tids_.begin(), waiting_tids_.end(), tid) != waiting_tids_.end()) continue;
    char line[256];
    int n = proc_.syscall_line(pid, tid, line, sizeof line - 1);
    if (n <= 0) continue;
    line[n] = 0;
    SyscallLine call;
    if (!parse_syscall_line(line, call)) continue;  // "running": not idle, no decision to make
    switch (call.nr) {
      case SYS_futex:
        // Go's runtime waits with FUTEX_WAIT_PRIVATE alone; glibc's condition variables with
        // FUTEX_WAIT_BITSET (a cgo call in pthread_cond_wait). A C mutex looks like Go's.
        if (call.a[1] != (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)) return true;
        continue;
      case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
      case SYS_nanosleep: case SYS_restart_syscall: case SYS_sched_yield:
        continue;
      default:
        return true;
    }
  }
  return false;
}

}  // namespace vtime::detail
