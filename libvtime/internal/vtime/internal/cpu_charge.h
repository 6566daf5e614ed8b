// The `calls` CPU-time model (abi::kCpuCalls): computation that only reads the clock or polls
// costs virtual time, so that busy-waits on the clock and strict `now > deadline` checks progress.
//
// Charged calls: a clock read, a poll/select/epoll with a zero timeout that finds nothing,
// sched_yield, a sleep or timed wait whose deadline has already passed. Real programs make many
// of them at one instant without busy-waiting (CPython reads the clock on every lock acquire:
// importing a set of large packages takes two thousand reads), so a thread's first
// cpu_burst_calls charged calls at one virtual instant are free (the session's, abi::Header);
// from the next one on, the thread is busy-waiting: each call adds
// the session's cost to its debt, paid as a sleep (until now + debt) whenever the debt reaches
// the quantum. The thread stays a busy-waiter (no new allowance when time moves) until it blocks
// in a wait of its own and time moves before its next charged call: a wait that ends at the
// instant it began (CPython's GIL handed to another thread and back) did not wait for time, and
// the loop goes on where it was. The clock stays one value for every thread, a program that does
// not spin is never delayed, and a spinning one moves time in steps of the quantum.
// Deterministic: all of it depends on the thread's own calls and on virtual time only.
#pragma once

#include <vtime/internal/context.h>

#include <cstdint>
#include <limits>

namespace vtime::detail {

// No instant: an allowance not begun, a wait not begun since the last charged call.
inline constexpr int64_t kNoInstant = std::numeric_limits<int64_t>::min();

// Per thread. The hot path is one decrement and a branch whatever the model (a clock read must
// stay a few nanoseconds): `left` counts the charged calls until the slow path, which looks at
// the model, the instant and the state, and sets the next count.
struct CpuDebt {
  int64_t left = 0;        // charged calls until the slow path; 0 for a thread that made none
  int64_t instant = kNoInstant;  // the virtual instant its allowance began
  bool spinning = false;   // used up an allowance at one instant and has not waited for time since
  // Busy-waiting, it blocked at this instant (min: not since its last charged call), with
  // `left_at_block` calls left of its quantum.
  int64_t blocked_at = kNoInstant;
  int64_t left_at_block = 0;
};
extern __attribute__((tls_model("initial-exec"))) thread_local CpuDebt t_cpu_debt;

// The slow path of a charged call at virtual instant `at`: starts an allowance, declares the
// thread busy-waiting, or (busy-waiting) pays a quantum's worth of calls by sleeping it. True when
// the thread slept.
bool charge_slow(ProcessContext& c, int64_t at);

// One charged call made at virtual instant `at` (ns). True when the thread paid (slept): the
// caller's idea of now is stale.
inline bool charge_call(ProcessContext& c, int64_t at) {
  if (--t_cpu_debt.left > 0) [[likely]] return false;
  return charge_slow(c, at);
}
inline bool charge_call(ProcessContext& c) {
  if (--t_cpu_debt.left > 0) [[likely]] return false;
  return charge_slow(c, now(c).ns());
}
// The thread blocks in a wait of its own. Not busy-waiting: its next charged call starts a new
// allowance. Busy-waiting: its next charged call ends the busy-wait if time moved since this
// wait began, or goes on paying where it was (the slow path decides; `left` 0 sends it there).
inline void cpu_thread_blocks(ProcessContext& c) {
  CpuDebt& d = t_cpu_debt;
  if (d.spinning) {
    if (d.blocked_at == kNoInstant) {
      d.blocked_at = now(c).ns();
      d.left_at_block = d.left;
    }
    d.left = 0;
  } else if (d.instant != kNoInstant) {
    d.instant = kNoInstant;
    d.left = 0;
  }
}

// A poll-like call with a zero timeout returned `r`: charged when it found nothing (a poll that
// finds work is progress, not a busy-wait). Returns r, errno untouched.
inline int charge_if_none(ProcessContext& c, int r) {
  if (r == 0) charge_call(c);
  return r;
}

}  // namespace vtime::detail
