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

#include "context.h"

#include <cstdint>
#include <limits>

namespace vtime::detail {

// Charged calls a thread may make at one virtual instant before it counts as busy-waiting: ten
// times what importing a large Python package takes, and a few milliseconds of a spin loop.
inline constexpr uint32_t kCpuBurstCalls = 20000;

struct CpuDebt {
  int64_t instant = std::numeric_limits<int64_t>::min();
  uint32_t calls = 0;      // charged calls at `instant`
  bool spinning = false;   // paid once and has not blocked since: no allowance
  int64_t owed = 0;
};
extern __attribute__((tls_model("initial-exec"))) thread_local CpuDebt t_cpu_debt;

// Sleeps until the debt's instant + the debt, and clears it. True when the thread slept.
bool pay_cpu_debt(ProcessContext& c);

// One charged call made at virtual instant `at` (ns). True when the thread paid (slept): the
// caller's idea of now is stale.
inline bool charge_call(ProcessContext& c, int64_t at) {
  if (c.cpu_model != abi::kCpuCalls) return false;
  CpuDebt& d = t_cpu_debt;
  if (d.instant != at) {
    d.instant = at;
    d.calls = 0;
    d.owed = 0;
  }
  if (!d.spinning && ++d.calls <= kCpuBurstCalls) return false;
  d.owed += c.cpu_cost_ns;
  return d.owed >= c.cpu_quantum_ns && pay_cpu_debt(c);
}
// The thread blocks in a wait of its own: it is not busy-waiting (any more).
inline void cpu_thread_blocks() {
  t_cpu_debt.spinning = false;
  t_cpu_debt.calls = 0;
}
inline bool charge_call(ProcessContext& c) {
  return c.cpu_model == abi::kCpuCalls && charge_call(c, now(c).ns());
}

// A poll-like call with a zero timeout returned `r`: charged when it found nothing (a poll that
// finds work is progress, not a busy-wait). Returns r, errno untouched.
inline int charge_if_none(ProcessContext& c, int r) {
  if (r == 0 && c.cpu_model == abi::kCpuCalls) charge_call(c);
  return r;
}

}  // namespace vtime::detail
