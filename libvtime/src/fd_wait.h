// Shared machinery of the fd-readiness waits (poll, select, epoll families): the real call runs
// untimed with the thread's eventfd added to its set, and the agent writes that eventfd when the
// virtual deadline comes. The user's own sets and epoll instances are never modified.
#pragma once

#include "context.h"
#include "waits.h"

#include <poll.h>
#include <signal.h>

namespace vtime::detail {

// An action that writes 1 to the eventfd in arg2.
AgentAction eventfd_action(int evfd);

// ppoll() over fds plus the thread's eventfd, until an fd is ready or the virtual deadline.
// Returns the number of ready user fds (0 = deadline reached) or -1 with errno.
int poll_until(ProcessContext& c, pollfd* fds, nfds_t nfds, TimePoint deadline, const sigset_t* sigmask,
               uint32_t reason);

}  // namespace vtime::detail
