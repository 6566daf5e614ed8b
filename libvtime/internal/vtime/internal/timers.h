// Virtual timers of this process: POSIX timers, ITIMER_REAL/alarm and timerfds, all emulated.
// Each armed timer is a process-owned waiter slot; the agent fires it at its virtual deadline
// (signal, SIGEV_THREAD callback or eventfd count) and re-arms periodic ones, counting every
// period a single clock jump covered.
#pragma once

#include <vtime/internal/context.h>

#include <sys/types.h>

namespace vtime::detail {

// The child after fork has no timers (POSIX timers and alarms are not inherited).
void timers_after_fork_child();
// close(fd) of one of our timerfds disarms and forgets it.
void timers_forget_fd(int fd);
// The agent, after a clock set by any process of the tree (abi::ClockState::realtime_sets
// moved): timerfds armed with TFD_TIMER_CANCEL_ON_SET become readable. Agent lock held.
void timers_on_clock_set(ProcessContext& c);
// read(2) that says ECANCELED for such a timerfd (the shim's read; others pass straight through).
ssize_t timers_read(int fd, void* buf, size_t n);

}  // namespace vtime::detail
