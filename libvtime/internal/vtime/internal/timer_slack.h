// How long after its deadline a timed wait of the wrapped programs ends: Linux's timer slack,
// applied the kernel's way (docs/shim.md "Timer slack"). Shared by the shim's waits (WaitScope)
// and the tracer's (tracer/timed_call.cpp, notified sleeps), so a Go program and a C one wait alike.
//
// Why: a frozen clock ends every wait exactly at its deadline, where a real kernel ends it later
// by the task's timer slack (50 us by default, /proc/self/timerslack_ns), and poll, select and
// epoll by 0.1% of their timeout when that is more (select_estimate_accuracy, capped at 100 ms).
// A periodic loop that re-arms after each run drifts by that much a period: kube-scheduler's
// one-second back-off flush by about 1 ms a second, which decides whether a job ending some
// seconds later is seen before or after that flush, as in a real cluster.
#pragma once

#include <vtime/abi.h>

#include <algorithm>
#include <cstdint>

namespace vtime::detail {

inline constexpr int64_t kFdWaitSlackDivisor = 1000;          // 0.1% of the timeout (nice <= 0)
inline constexpr int64_t kFdWaitSlackMaxNs = 100'000'000;     // the kernel's MAX_SLACK

// `remaining_ns`: from now to the deadline asked for (> 0). Sleeps end `sleep_latency_ns` late
// when it is set (a measured wake-up latency, slack included), else by the slack; fd waits by
// 0.1% of their timeout, at least the slack; other blocking waits (futex, condition variables,
// semaphores, locks, sigtimedwait) by the slack; timers (which Linux arms without slack) and the
// CPU-time model's payments not at all.
inline int64_t wait_lateness(uint32_t reason, int64_t remaining_ns, int64_t slack_ns, int64_t sleep_latency_ns) {
  switch (reason) {
    case abi::kReasonSleep:
      return sleep_latency_ns > 0 ? sleep_latency_ns : slack_ns;
    case abi::kReasonPoll:
    case abi::kReasonSelect:
    case abi::kReasonEpoll:
      if (slack_ns <= 0) return 0;
      return std::max(slack_ns, std::min(remaining_ns / kFdWaitSlackDivisor, kFdWaitSlackMaxNs));
    case abi::kReasonNone:
    case abi::kReasonPosixTimer:
    case abi::kReasonTimerfd:
    case abi::kReasonAlarm:
    case abi::kReasonCpu:
      return 0;
    default:
      return slack_ns;
  }
}

// A wait's lateness as the kernel arms it: Linux arms a wait with slack as a range timer,
// [deadline, deadline + slack], that fires at the first timer interrupt within it
// (hrtimer_start_range_ns; __hrtimer_run_queues expires every timer whose soft expiry has passed).
// So such a wait may end at any advance of the clock from the deadline asked for on, and only its
// end stops time: waits whose ranges overlap share one advance. A sleep with a measured wake-up
// latency (--sleep-latency) ends exactly that late (no range). The range is at most the 4.29 s
// abi::WaiterSlot::early_ns holds (a slack of more, which --timer-slack allows up to 1000 s, then
// ends the wait at most that long before its deadline plus the slack).
struct WaitSlack {
  int64_t late_ns = 0;   // added to the deadline asked for: when the wait ends at the latest
  int64_t range_ns = 0;  // how much before that it may end (abi::WaiterSlot::early_ns)
};
inline constexpr int64_t kMaxWaitRangeNs = UINT32_MAX;
inline WaitSlack wait_slack(uint32_t reason, int64_t remaining_ns, int64_t slack_ns, int64_t sleep_latency_ns) {
  WaitSlack w;
  w.late_ns = wait_lateness(reason, remaining_ns, slack_ns, sleep_latency_ns);
  const bool fixed = reason == abi::kReasonSleep && sleep_latency_ns > 0;
  w.range_ns = fixed ? 0 : std::min(w.late_ns, kMaxWaitRangeNs);
  return w;
}

// The same with the session's settings read from the segment's header: the tracer's and the
// controller's side, which have no ProcessContext.
inline WaitSlack wait_slack(const abi::Header& h, uint32_t reason, int64_t remaining_ns) {
  return wait_slack(reason, remaining_ns, h.timer_slack_ns.load(std::memory_order_relaxed),
                    h.sleep_latency_ns.load(std::memory_order_relaxed));
}

}  // namespace vtime::detail
