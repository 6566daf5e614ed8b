// The waiter slot of a process-owned timer (a POSIX timer, ITIMER_REAL/alarm, a timerfd): armed,
// disarmed, fired and read back the same way whoever emulates the timer, the shim in the
// program's own process (api_timer.cpp) or the tracer for a traced one (tracer/timers.h).
#pragma once

#include <vtime/abi.h>
#include <vtime/time.h>

#include <sys/time.h>
#include <time.h>

#include <cstdint>

namespace vtime::detail {

// Waiting until `deadline` (`realtime`: an absolute time on a realtime clock, computed with the
// clock's realtime shift `shift`, which a later clock set moves). A new seq: ties at one
// deadline fire in arming order.
void arm_timer_slot(abi::Segment& seg, uint32_t slot, TimePoint deadline, bool realtime, int64_t shift);
void disarm_timer_slot(abi::Segment& seg, uint32_t slot);

// The controller reached the slot's deadline and it is `now`: how many expirations that stands
// for (the periods the clock's jump covered, at least 1). A periodic timer (interval_ns > 0) is
// re-armed at its next period, a one-shot disarmed.
uint64_t fire_timer_slot(abi::Segment& seg, uint32_t slot, int64_t interval_ns, TimePoint now);

// What timer_gettime/timerfd_gettime answer: the time left (at least 1 ns while armed) and the
// interval.
itimerspec timer_slot_value(const abi::Segment& seg, uint32_t slot, int64_t interval_ns, TimePoint now);

// A valid itimerspec for timer_settime/timerfd_settime (the kernel's EINVAL otherwise).
bool valid_itimerspec(const itimerspec& v);

// The same with every seconds field capped at about 126 years, as good as never: valid values
// the kernel takes (up to KTIME_MAX) would overflow the nanosecond arithmetic of deadlines.
itimerspec bounded(itimerspec v);
itimerval bounded(itimerval v);

// alarm()'s answer for the time the previous alarm had left: rounded to the nearest second, and
// at least 1 while one was pending (as Linux).
unsigned alarm_seconds_left(const itimerval& old);

}  // namespace vtime::detail
