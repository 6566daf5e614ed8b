// Waiting on virtual time: the calling thread's slot, and the scope of one timed wait.
//
// Every family (sleeps, fd waits, condition variables, ...) opens a WaitScope for the duration
// of its blocking call: the slot carries the virtual deadline the controller must wake it at.
// Sleeps block on the slot's own futex word (kWakeFutex); the others block in the real libc call
// and let the agent interrupt it at the deadline (kWakeAgent with an AgentAction).
#pragma once

#include <vtime/internal/agent.h>
#include <vtime/internal/context.h>
#include <vtime/internal/slots.h>

#include <cstdint>

namespace vtime::detail {

struct ThreadState {
  int32_t slot = -1;   // the thread's own slot, kept between waits
  int32_t tid = 0;
  int32_t depth = 0;   // nested waits (a signal handler that sleeps) use temporary slots
  int32_t evfd = -1;   // the thread's eventfd for fd waits, created on first use
  uint64_t futex_calls = 0;  // futex waits made by wait_word (the tag of the next one)
};

ThreadState& thread_state();
// Claims a free slot for thread `tid` (or, is_timer, for the process); kNoSlot when full.
uint32_t try_claim_slot(ProcessContext& c, pid_t tid, bool is_timer);
// Forget the slot and eventfd of the thread that forked (in the child).
void thread_after_fork_child();
// The thread's eventfd (non-blocking, close-on-exec) the agent writes at a deadline.
int thread_eventfd();
// Drains the thread's eventfd after a wait.
void drain_eventfd(int fd);

// Absolute CLOCK_REALTIME deadlines (abi::WaiterSlot::realtime_abs). Before the slot becomes
// Waiting: marks it from t_realtime_mark when the mark is this deadline's, and consumes the mark.
void mark_realtime(abi::WaiterSlot& s, TimePoint deadline);
// The same for a deadline known to be (or not to be) an absolute realtime one, computed with
// realtime shift `shift` (timers keep their clock and flags).
void mark_realtime(abi::WaiterSlot& s, bool realtime, int64_t shift);
// Moves a realtime slot's deadline to the clock's `shift`; the compare-exchange on shift_at makes
// the setter and the registering thread apply one set once between them.
void move_realtime_deadline(abi::WaiterSlot& s, int64_t shift);
// After the slot became Waiting: applies a clock set that raced with the registration.
void settle_realtime(abi::Segment& seg, abi::WaiterSlot& s);

class WaitScope {
 public:
  WaitScope(ProcessContext& c, TimePoint deadline, uint32_t reason, uint32_t wake_kind,
            const AgentAction* action = nullptr);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

  uint32_t slot() const { return slot_; }
  // This wait's sequence number: unique in the session (a tagged call carries it, fd_wait.h).
  uint64_t seq() const;
  // The controller reached the deadline (the slot was woken).
  bool woken() const;
  // kWakeFutex: blocks until woken (returns 0) or a signal handler ran (returns EINTR).
  int block();

 private:
  ProcessContext& c_;
  uint32_t slot_;
  bool temporary_;
  bool has_action_;
};

}  // namespace vtime::detail
