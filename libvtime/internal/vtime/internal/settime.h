// Setting a session's virtual CLOCK_REALTIME: the one implementation behind the shim's
// clock_settime & co. (api_settime.cpp) and the tracer's emulation of the same system calls made
// raw by static and Go programs. Nothing here touches the host's clock.
//
// Each function takes the caller's right to set the time (CAP_SYS_TIME in its effective set, as
// the kernel checks it) and returns what the system call would: 0 (TIME_OK for the adjtimex
// family) or -errno, EINVAL for bad values checked before EPERM, as Linux does.
#pragma once

#include <vtime/abi.h>

#include <sys/time.h>
#include <sys/timex.h>
#include <sys/types.h>
#include <time.h>

namespace vtime::detail {

// CAP_SYS_TIME in the effective set of thread `tid` (0: the calling thread).
bool may_set_time(pid_t tid = 0);

// clock_settime(2): CLOCK_REALTIME moves; the other clocks vtime virtualises cannot be set
// (EINVAL, before the right is looked at).
int settime_clock(abi::Segment& seg, bool may_set, clockid_t clk, const timespec& ts);
// settimeofday(2) with a time (or none), and whether a timezone was passed as well.
int settime_timeofday(abi::Segment& seg, bool may_set, const timeval* tv, bool has_tz);
// adjtimex(2) and clock_adjtime(2) on CLOCK_REALTIME: ADJ_SETOFFSET and the single-shot offset
// move the clock, every other mode is accepted with no effect; `tx` is filled as a read reports
// (an exact, synchronised clock).
int settime_adjust(abi::Segment& seg, bool may_set, struct timex& tx);

}  // namespace vtime::detail
