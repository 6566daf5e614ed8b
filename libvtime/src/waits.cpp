// Thread slots and wait scopes (see waits.h).
#include <vtime/internal/waits.h>

#include <vtime/internal/cpu_charge.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/timer_slack.h>
#include "libc.h"
#include <vtime/internal/slots.h>

#include <vtime/session.h>

#include <pthread.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace vtime::detail {
namespace {

__attribute__((tls_model("initial-exec"))) thread_local ThreadState t_state;
pthread_key_t g_exit_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

// Thread exit: give the slot back and close the eventfd.
void on_thread_exit(void*) {
  ProcessContext* c = context();
  ThreadState& ts = t_state;
  if (c && ts.slot >= 0) {
    free_slot(c->seg->waiters[ts.slot]);
    notify_activity(*c->seg);
  }
  if (ts.evfd >= 0) libc().close(ts.evfd);
  ts = ThreadState{};
}

void make_key() { pthread_key_create(&g_exit_key, on_thread_exit); }

uint32_t claim_thread_slot(ProcessContext& c, pid_t tid) {
  uint32_t i = try_claim_slot(c, tid, false);
  if (i != kNoSlot) return i;
  fprintf(stderr, "vtime: waiter table full (%u slots)\n", abi::kWaiterSlots);
  _exit(kExitAttachFailed);
}

}  // namespace

uint32_t claim_waiter_slot(abi::Segment& seg, pid_t pid, pid_t tid, uint32_t process, bool is_timer) {
  // A thread claims its slot once and keeps it between waits.
  auto& high = seg.header.waiter_high;
  for (uint32_t i = 0; i < abi::kWaiterSlots; ++i) {
    auto& s = seg.waiters[i];
    if (s.state.load(std::memory_order_relaxed) != abi::kFree) continue;
    // Raised before the claim: a scan that sees the slot in use also sees it within the limit.
    uint32_t h = high.load(std::memory_order_seq_cst);
    while (h <= i && !high.compare_exchange_weak(h, i + 1, std::memory_order_seq_cst)) {
    }
    uint32_t expected = abi::kFree;
    if (s.state.compare_exchange_strong(expected, abi::kClaimed, std::memory_order_acq_rel)) {
      s.pid.store(pid, std::memory_order_relaxed);
      s.tid.store(tid, std::memory_order_relaxed);
      s.process.store(process, std::memory_order_relaxed);
      s.is_timer.store(is_timer ? 1 : 0, std::memory_order_relaxed);
      s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
      s.early_ns.store(0, std::memory_order_relaxed);
      return i;
    }
  }
  return kNoSlot;
}

abi::SlotState settle_waking(const abi::WaiterSlot& s) {
  uint32_t st = s.state.load(std::memory_order_seq_cst);
  if (st != abi::kWaking) return static_cast<abi::SlotState>(st);
  const int64_t until = real_monotonic_ns() + 1000000000LL;
  while ((st = s.state.load(std::memory_order_seq_cst)) == abi::kWaking && real_monotonic_ns() < until) {
    raw_syscall6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);  // the raw call: the shim's would charge the CPU model
  }
  return static_cast<abi::SlotState>(st);
}

uint32_t try_claim_slot(ProcessContext& c, pid_t tid, bool is_timer) {
  return claim_waiter_slot(*c.seg, c.pid, tid, c.proc_index, is_timer);
}

ThreadState& thread_state() { return t_state; }

__attribute__((tls_model("initial-exec"))) thread_local RealtimeMark t_realtime_mark;

void mark_realtime(abi::WaiterSlot& s, TimePoint deadline) {
  RealtimeMark& m = t_realtime_mark;
  mark_realtime(s, m.set && m.deadline == deadline.ns(), m.shift);
  m.set = false;
}

void mark_realtime(abi::WaiterSlot& s, bool realtime, int64_t shift) {
  s.realtime_abs.store(realtime ? 1 : 0, std::memory_order_relaxed);
  s.shift_at.store(shift, std::memory_order_relaxed);
}

void move_realtime_deadline(abi::WaiterSlot& s, int64_t shift) {
  int64_t at = s.shift_at.load(std::memory_order_acquire);
  while (at != shift) {
    if (s.shift_at.compare_exchange_weak(at, shift, std::memory_order_acq_rel)) {
      // Realtime set forward by d: the same absolute realtime instant comes d sooner.
      s.deadline.fetch_sub(shift - at, std::memory_order_acq_rel);
      return;
    }
  }
}

void settle_realtime(abi::Segment& seg, abi::WaiterSlot& s) {
  if (s.realtime_abs.load(std::memory_order_relaxed) == 0) return;
  move_realtime_deadline(s, seg.header.clock.realtime_shift_ns.load(std::memory_order_acquire));
}

void thread_after_fork_child() {
  // The slot belongs to the parent's thread; the eventfd is shared with the parent.
  if (t_state.evfd >= 0) libc().close(t_state.evfd);
  t_state = ThreadState{};
}

int thread_eventfd() {
  ThreadState& ts = t_state;
  if (ts.evfd < 0) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return -1;
    // Keep it out of the low numbers programs like to dup2 over.
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (high >= 0) {
      libc().close(fd);
      fd = high;
    }
    ts.evfd = fd;
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_exit_key, &t_state);
  }
  return ts.evfd;
}

void drain_eventfd(int fd) {
  uint64_t v;
  while (libc().read(fd, &v, sizeof v) == sizeof v) {
  }
}

WaitScope::WaitScope(ProcessContext& c, TimePoint deadline, uint32_t reason, uint32_t wake_kind,
                     const AgentAction* action)
    : c_(c), has_action_(action != nullptr) {
  ThreadState& ts = t_state;
  if (ts.tid == 0) ts.tid = gettid_raw();
  if (ts.depth == 0 && ts.slot < 0) {
    ts.slot = static_cast<int32_t>(claim_thread_slot(c, ts.tid));
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_exit_key, &t_state);
  }
  if (reason != abi::kReasonCpu) cpu_thread_blocks(c);
  // A real kernel ends the wait later than asked: a sleep by its wake-up latency, any wait by its
  // timer slack (timer_slack.h). The realtime mark belongs to the deadline asked for.
  const TimePoint asked = deadline;
  int64_t early = 0;
  if ((c.timer_slack_ns > 0 || c.sleep_latency_ns > 0) && !deadline.is_never()) {
    const int64_t remaining = (deadline - now(c)).ns();
    if (remaining > 0) {
      const WaitSlack slack = wait_slack(reason, remaining, c.timer_slack_ns, c.sleep_latency_ns);
      deadline = deadline + nanoseconds(slack.late_ns);
      early = slack.range_ns;
    }
  }
  temporary_ = ts.depth > 0;
  slot_ = temporary_ ? claim_thread_slot(c, ts.tid) : static_cast<uint32_t>(ts.slot);
  ++ts.depth;
  auto& s = c.seg->waiters[slot_];
  s.deadline.store(deadline.ns(), std::memory_order_relaxed);
  s.early_ns.store(static_cast<uint32_t>(early), std::memory_order_relaxed);
  s.reason.store(reason, std::memory_order_relaxed);
  s.wake_kind.store(wake_kind, std::memory_order_relaxed);
  s.seq.store(c.seg->header.next_seq.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
  mark_realtime(s, asked);
  s.tracer_flags.store(0, std::memory_order_relaxed);  // abi::kAgentRetry is the controller's, per wake
  if (action) agent_add(c, slot_, *action);
  s.state.store(abi::kWaiting, std::memory_order_release);
  settle_realtime(*c.seg, s);
  notify_activity(*c.seg);
}

WaitScope::~WaitScope() {
  if (has_action_) agent_remove(c_, slot_);
  auto& s = c_.seg->waiters[slot_];
  if (temporary_) {
    free_slot(s);
  } else {
    s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
    s.realtime_abs.store(0, std::memory_order_relaxed);
    s.state.store(abi::kClaimed, std::memory_order_release);
  }
  --t_state.depth;
  notify_activity(*c_.seg);
}

uint64_t WaitScope::seq() const { return c_.seg->waiters[slot_].seq.load(std::memory_order_relaxed); }

bool WaitScope::woken() const {
  return c_.seg->waiters[slot_].state.load(std::memory_order_acquire) == abi::kWoken;
}

int WaitScope::block() {
  auto& s = c_.seg->waiters[slot_];
  auto& pw = c_.seg->processes[c_.proc_index].sleep_word;
  for (;;) {
    // The process's word first, then the slot: a wake-up after this read bumps the word, so the
    // wait below returns at once.
    uint32_t w = pw.load(std::memory_order_acquire);
    if (s.state.load(std::memory_order_acquire) == abi::kWoken) return 0;
    if (sleep_on(c_, slot_, w) == EINTR) {
      // Interrupted, unless the controller woke us meanwhile; while it is at it (Waking), wait.
      for (;;) {
        if (settle_waking(s) != abi::kWaiting) return 0;
        uint32_t expected = abi::kWaiting;
        if (s.state.compare_exchange_strong(expected, abi::kClaimed, std::memory_order_acq_rel)) return EINTR;
      }
    }
  }
}

}  // namespace vtime::detail
