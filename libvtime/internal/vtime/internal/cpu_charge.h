// The `calls` CPU-time model (abi::kCpuCalls): computation that only reads the clock or polls
// costs virtual time, so that busy-waits on the clock and strict `now > deadline` checks progress.
//
// Charged calls: a clock read, a poll/select/epoll with a zero timeout that finds nothing,
// sched_yield, a sleep or timed wait whose deadline has already passed. Real programs make many
// of them at one instant without busy-waiting (CPython reads the clock on every lock acquire:
// importing a module takes a thousand reads), so a thread's first kCpuBurstCalls charged calls at
// one virtual instant are free; from the next one on, the thread is busy-waiting: each call adds
// the session's cost to its debt, paid as a sleep (until now + debt) whenever the debt reaches
// the quantum. The thread stays a busy-waiter (no new allowance when time moves) until it blocks
// in a wait of its own. The clock stays one value for every thread, a program that does not spin
// is never delayed, and a spinning one moves time in steps of the quantum. Deterministic: all of
// it depends on the thread's own calls only.
#pragma once

#include <vtime/internal/context.h>

#include <cstdint>
#include <limits>

namespace vtime::detail {

// Charged calls a thread may make at one virtual instant before it counts as busy-waiting: ten
// times what importing a large Python package takes, and a few milliseconds of a spin loop.
inline constexpr uint32_t kCpuBurstCalls = 20000;

// Per thread. The hot path is one decrement and a branch whatever the model (a clock read must
// stay a few nanoseconds): `left` counts the charged calls until the slow path, which looks at
// the model, the instant and the state, and sets the next count.
struct CpuDebt {
  int64_t left = 0;        // charged calls until the slow path; 0 for a thread that made none
  int64_t instant = std::numeric_limits<int64_t>::min();  // the virtual instant its allowance began
  bool spinning = false;   // used up an allowance at one instant and has not blocked since
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
// The thread blocks in a wait of its own: it is not busy-waiting (any more), and its next charged
// call starts a new allowance.
inline void cpu_thread_blocks() {
  CpuDebt& d = t_cpu_debt;
  if (d.spinning || d.instant != std::numeric_limits<int64_t>::min()) {
    d.spinning = false;
    d.instant = std::numeric_limits<int64_t>::min();
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
