// Clock-setting system calls of traced threads (static and Go programs, which make them raw):
// emulated on the session's virtual clock, exactly as the shim does for dynamic programs
// (libvtime/internal/vtime/internal/settime.h), so that no process of the tree ever sets the host's clock.
//
// The seccomp filter (trace_request.cpp) stops every clock_settime, settimeofday, adjtimex and
// clock_adjtime. At that stop the tracer reads the arguments from the thread's memory, applies
// the call to the virtual clock with the thread's own right to set the time (CAP_SYS_TIME, as the
// kernel would check it), writes back what the call writes (adjtimex's struct), and has the
// kernel skip the call with its result (orig_rax = -1, rax = result).
#pragma once

#include <vtime/abi.h>

#include <sys/types.h>
#include <sys/user.h>

namespace vtime::tracer {

// True when the stopped call in `r` was a clock-setting call on a clock vtime virtualises: it is
// emulated and the registers are written (resume the thread). False otherwise (a clock vtime
// leaves to the kernel, such as a CPU-time clock: run the call as it is).
bool emulate_clock_set(pid_t tid, pid_t pid, user_regs_struct& r, abi::Segment& seg);

}  // namespace vtime::tracer
