// The `calls` CPU-time model's payment (see cpu_charge.h).
#include "cpu_charge.h"

#include "waits.h"

namespace vtime::detail {

__attribute__((tls_model("initial-exec"))) thread_local CpuDebt t_cpu_debt;

bool pay_cpu_debt(ProcessContext& c) {
  CpuDebt& d = t_cpu_debt;
  TimePoint until = TimePoint::from_ns(d.instant + d.owed);
  d.owed = 0;
  if (until <= now(c)) return false;
  // A plain virtual sleep: other threads' deadlines that fall within it fire first, in order. A
  // signal handler that interrupts it ends the payment early (the debt is not owed twice).
  {
    WaitScope w(c, until, abi::kReasonCpu, abi::kWakeFutex);
    w.block();
  }
  d.spinning = true;  // set after the scope: its construction counts as blocking otherwise
  return true;
}

}  // namespace vtime::detail
