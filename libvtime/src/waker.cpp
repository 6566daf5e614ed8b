// Which due waits an advance wakes, in which order, and how (see waker.h).
#include "waker.h"

#include <vtime/log.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/slots.h>

#include "waiter_kinds.h"

#include <signal.h>

#include <algorithm>
#include <cstdint>

namespace vtime::detail {

template <class Pick>
pid_t Waker::first_turn_among(Pick pick) {
  pids_.clear();
  for (const Due& d : due_) {
    if (pick(d)) pids_.push_back(d.pid);
  }
  return first_turn_(pids_);
}

pid_t Waker::keep_first_step(bool serial) {
  // Only the earliest deadline, and of the processes due then, the one whose turn comes first
  // (turn_of): the caller lets the tree settle before the next step, so processes due at one
  // instant run one after another in an order that does not depend on real-time races (see
  // advance_step in controller.h). Housekeeping waits due by then go with this first step
  // (see earliest_deadline), unless they are all there is.
  bool program = std::any_of(due_.begin(), due_.end(), [](const Due& d) { return !d.housekeeping; });
  int64_t first = abi::kNoDeadline;
  for (const Due& d : due_) {
    if (!program || !d.housekeeping) first = std::min(first, d.deadline);
  }
  pid_t pid = first_turn_among([&](const Due& d) {
    return d.deadline == first && (!program || !d.housekeeping);
  });
  // The serial gate: a runtime's housekeeping (Go's sysmon) woken with its own process's
  // timers would run beside them, and what it does first (take in ready descriptors, hand a
  // processor over) would depend on real time. Other processes' housekeeping goes with the
  // step and is held by the gate until the tree is idle. This process's stays pending while
  // another process has timers due (the step for that one wakes it, and the gate holds it),
  // or else goes in a step of its own, before the timers.
  bool own_housekeeping = serial && program && std::any_of(due_.begin(), due_.end(), [&](const Due& d) {
    return d.housekeeping && d.pid == pid;
  });
  bool later_step = own_housekeeping && std::any_of(due_.begin(), due_.end(), [&](const Due& d) {
    return !d.housekeeping && d.pid != pid;
  });
  bool alone = own_housekeeping && !later_step;
  std::erase_if(due_, [&](const Due& d) {
    if (program && d.housekeeping) return later_step && d.pid == pid;
    if (alone) return true;
    return d.deadline != first || d.pid != pid;
  });
  // Thread turns (the gate on): of a traced process's threads due at one instant, one per step,
  // the one whose wait was armed first. Woken together they raced for the process's one
  // processor: in etcd, the network poller's timed epoll wait and a charged WAL sync ending at
  // the same instant; which thread took the processor (and so ran which goroutines, with its own
  // random generator) was decided in real time, and 1 run in 7 went another way from there
  // (docs/k8s.md). The others stay due: the next step, once the tree is idle, wakes the next.
  if (serial && !alone) {
    auto thread_wait = [&](const Due& d) { return d.pid == pid && !d.housekeeping && d.traced; };
    uint64_t first_seq = UINT64_MAX;
    for (const Due& d : due_) {
      if (thread_wait(d)) first_seq = std::min(first_seq, d.seq);
    }
    std::erase_if(due_, [&](const Due& d) { return thread_wait(d) && d.seq != first_seq; });
  }
  return pid;
}

Waker::Plan Waker::plan(TimePoint t, bool one_process) {
  due_.clear();
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (soft_deadline(w, d) <= t.ns()) {
      due_.push_back({d, w.seq.load(std::memory_order_relaxed), i, w.process.load(std::memory_order_relaxed),
                      w.pid.load(std::memory_order_relaxed), housekeeping(w),
                      w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer});
    }
  }
  Plan out;
  out.serial = seg_.header.serial.load(std::memory_order_acquire) != 0;
  const bool serial = out.serial;
  pid_t step_pid = 0;  // one_process: the process this step is for
  if (one_process && !due_.empty()) step_pid = keep_first_step(serial);
  // Deadline order; within one deadline, the waiters of one process together: the kernel wakes a
  // group in that order, and a cpu going from one woken thread to the next one of the same
  // process skips the address-space switch, which is dear on this kind of virtual machine
  // (page-table isolation): 1,000 sleepers in 4 processes ran 20% sooner.
  std::sort(due_.begin(), due_.end(), [](const Due& a, const Due& b) {
    if (a.deadline != b.deadline) return a.deadline < b.deadline;
    return a.process != b.process ? a.process < b.process : a.seq < b.seq;
  });
  // The serial gate: the tree goes to the process this step is for (the first turn of a
  // timeout policy's group); the others' threads due with it (a Go runtime's housekeeping) are
  // held until it is idle.
  if (!serial || due_.empty()) return out;
  if (step_pid != 0) {
    out.give_to = step_pid;
    return out;
  }
  bool program = std::any_of(due_.begin(), due_.end(), [](const Due& d) { return !d.housekeeping; });
  out.give_to = first_turn_among([&](const Due& d) { return !program || !d.housekeeping; });
  return out;
}

int Waker::wake(TimePoint t, bool one_process, bool serial, bool kernel_count) {
  int woken = 0;
  tracer_due_ = false;
  VTIME_LOGF("controller", LogLevel::kDebug, "advance to %lld: %zu due", static_cast<long long>(t.ns()), due_.size());
  // One group per deadline, in deadline order.
  for (size_t g = 0; g < due_.size();) {
    size_t end = g;
    while (end < due_.size() && due_[end].deadline == due_[g].deadline) ++end;
    woken += wake_group(g, end, t, one_process, serial, kernel_count);
    g = end;
  }
  // The tracer interrupts the due calls of its threads (tracer/tracer.h).
  // A tracer that polls finds them itself (abi::Header::tracer_awake: the slots were marked Woken
  // and the flag is read here, both sequentially consistent, as the tracer's side is).
  auto& h = seg_.header;
  if (pid_t tracer = h.tracer_pid.load(std::memory_order_acquire);
      tracer_due_ && tracer > 0 && h.tracer_awake.load(std::memory_order_seq_cst) == 0) {
    kill(tracer, SIGUSR2);
  }
  return woken;
}

// A group is first marked Woken entirely, then woken with as few wake-ups as possible: one per
// agent, and one FUTEX_WAKE_BITSET per process for all its sleepers (they all wait on their
// process's sleep word, each with the bit of its slot; see abi::ProcessSlot). Waking sleepers one
// system call at a time made the controller lose its cpu to every sleeper it woke (the kernel
// runs the wakee first), so the last of 1,000 sleepers ran only after 1,000 such round trips. A
// sleeper not queued yet (between its look at the word and its futex call) finds the word bumped
// and does not sleep; one whose bit is shared with a woken slot wakes, finds its own slot still
// Waiting and waits again. Sleepers with one deadline run concurrently anyway: the order among
// them was never observable.
int Waker::wake_group(size_t g, size_t end, TimePoint t, bool one_process, bool serial, bool kernel_count) {
  int woken = 0;
  sleepers_.clear();
  agents_.clear();
  for (size_t k = g; k < end; ++k) {
    const Due& d = due_[k];
    auto& w = seg_.waiters[d.index];
    // Waking while this checks that the slot still holds the wait found due (abi::kWaking): its
    // owner may have ended it and armed the next one on the slot since plan() looked, which
    // may even have read one wait's deadline and the next one's seq. While the slot is Waking
    // its owner writes no field of it without making that step fail (finish_waking).
    uint32_t expected = abi::kWaiting;
    if (!w.state.compare_exchange_strong(expected, abi::kWaking, std::memory_order_seq_cst)) continue;
    if (w.seq.load(std::memory_order_acquire) != d.seq ||
        soft_deadline(w, w.deadline.load(std::memory_order_acquire)) > t.ns()) {
      finish_waking(w, abi::kWaiting);
      continue;
    }
    // Not a step (advance_step comes after the tree was found idle): the timeout policy or a
    // running clock, so the waiter may still be on its way to its blocking call
    // (abi::kAgentRetry). Set before the slot turns Woken, which the agent looks at first.
    if (!one_process && w.wake_kind.load() == abi::kWakeAgent && w.is_timer.load() == 0) {
      w.tracer_flags.fetch_or(abi::kAgentRetry, std::memory_order_relaxed);
    }
    if (w.wake_kind.load() == abi::kWakeTracer) {
      woken += wake_tracer_wait(w, d, serial, kernel_count);
      continue;
    }
    if (!finish_waking(w, abi::kWoken)) continue;  // its owner ended it meanwhile
    ++woken;
    uint32_t pi = w.process.load();
    if (pi >= abi::kProcessSlots) continue;
    if (w.wake_kind.load() == abi::kWakeAgent) {
      if (std::find(agents_.begin(), agents_.end(), pi) == agents_.end()) agents_.push_back(pi);
    } else {
      w.word.fetch_add(1, std::memory_order_acq_rel);  // ends the controller's proof of it
      auto it = std::find_if(sleepers_.begin(), sleepers_.end(), [&](const auto& e) { return e.first == pi; });
      if (it == sleepers_.end()) {
        sleepers_.emplace_back(pi, abi::sleep_bit(d.index));
      } else {
        it->second |= abi::sleep_bit(d.index);
      }
    }
  }
  // The agent runs every due action of its process in one pass: one wake-up is enough.
  for (uint32_t pi : agents_) wake_agent(seg_, pi);
  for (auto [pi, bits] : sleepers_) wake_sleepers(seg_, pi, bits);
  return woken;
}

int Waker::wake_tracer_wait(abi::WaiterSlot& w, const Due& d, bool serial, bool kernel_count) {
  const uint32_t flags = w.tracer_flags.load();
  const int counted = (flags & abi::kTracerHousekeeping) == 0 ? 1 : 0;
  if ((flags & abi::kTracerNotify) != 0) {
    // The controller's own (notify_sleeps.h): answered here. A notification a signal took
    // away leaves the slot Woken: the call the kernel restarts is answered when it comes,
    // or the tracer ends the sleep if a handler ran.
    const auto answered = notify_.answer(d.index);
    if (answered == NotifiedSleeps::Answer::kGone) {
      finish_waking(w, abi::kWoken);
    } else if (finish_waking(w, abi::kClaimed)) {
      free_slot(w);  // answered, or a slot no sleep of ours holds any more
    }
    return answered != NotifiedSleeps::Answer::kUnknown ? counted : 0;
  }
  // A direct sleep (abi::kTracerDirect) is woken here, on its slot's word, when its thread
  // is queued there: the kernel count then counts it from this wake-up on, so the slot can
  // end at once. Without the count (the /proc rule needs the Woken slot until the wake-up is
  // taken), under the serial gate (which holds threads at the exit of their waits), or when
  // no task was queued (a wake that did not wait for the tree to be idle), the tracer
  // interrupts it like its other waits.
  if ((flags & abi::kTracerDirect) != 0) {
    if (kernel_count && !serial && futex_wake_bitset(&w.word, abi::direct_bit(d.seq)) == 1) {
      // Counted even if the tracer re-armed the slot meanwhile: the thread did wake.
      finish_waking(w, abi::kClaimed);
      return counted;
    }
    // Sequentially consistent, and before the slot turns Woken: the tracer interrupts only
    // Woken slots without the flag.
    w.tracer_flags.fetch_and(~abi::kTracerDirect, std::memory_order_seq_cst);
  }
  // Sequentially consistent (finish_waking): ordered before the read of tracer_awake.
  if (!finish_waking(w, abi::kWoken)) return 0;
  tracer_due_ = true;
  return counted;
}

}  // namespace vtime::detail
