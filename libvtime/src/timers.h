// Virtual timers of this process: POSIX timers, ITIMER_REAL/alarm and timerfds, all emulated.
// Each armed timer is a process-owned waiter slot; the agent fires it at its virtual deadline
// (signal, SIGEV_THREAD callback or eventfd count) and re-arms periodic ones, counting every
// period a single clock jump covered.
#pragma once

#include "context.h"

namespace vtime::detail {

// The child after fork has no timers (POSIX timers and alarms are not inherited).
void timers_after_fork_child();
// close(fd) of one of our timerfds disarms and forgets it.
void timers_forget_fd(int fd);

}  // namespace vtime::detail
