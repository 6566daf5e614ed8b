// The `calls` CPU-time model's slow path and payment (see cpu_charge.h).
#include <vtime/internal/cpu_charge.h>

#include <vtime/internal/waits.h>

#include <algorithm>

namespace vtime::detail {

__attribute__((tls_model("initial-exec"))) thread_local CpuDebt t_cpu_debt;

bool charge_slow(ProcessContext& c, int64_t at) {
  CpuDebt& d = t_cpu_debt;
  if (c.cpu_model != abi::kCpuCalls) {
    d.left = std::numeric_limits<int64_t>::max();  // never again: nothing is charged
    return false;
  }
  int64_t per_quantum = std::max<int64_t>(1, c.cpu_quantum_ns / std::max<int64_t>(1, c.cpu_cost_ns));
  if (d.spinning && d.blocked_at != kNoInstant) {
    // The first charged call since it blocked, busy-waiting (cpu_thread_blocks).
    bool waited_for_time = at != d.blocked_at;
    d.blocked_at = kNoInstant;
    if (waited_for_time) {
      d.spinning = false;
      d.instant = kNoInstant;
    } else {
      d.left = d.left_at_block;  // the same instant: the loop goes on paying where it was
      if (--d.left > 0) return false;
    }
  }
  if (!d.spinning) {
    if (d.instant != at) {
      // A new instant (or the first charged call, or the first after blocking): a new allowance.
      d.instant = at;
      d.left = std::max<int64_t>(1, c.cpu_burst_calls);
      return false;
    }
    // The whole allowance used at one instant: busy-waiting. Every call from here on costs.
    d.spinning = true;
    d.left = per_quantum;
    return false;
  }
  d.left = per_quantum;
  // A quantum's worth of calls: sleep it. A plain virtual sleep: other threads' deadlines that
  // fall within it fire first, in order. A signal handler that interrupts it ends the payment
  // early (the debt is not owed twice).
  TimePoint until = now(c) + nanoseconds(per_quantum * c.cpu_cost_ns);
  WaitScope w(c, until, abi::kReasonCpu, abi::kWakeFutex);
  w.block();
  return true;
}

}  // namespace vtime::detail
