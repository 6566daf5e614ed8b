// Shared machinery of the fd-readiness waits (poll, select, epoll families): the real call runs
// untimed with the thread's eventfd added to its set, and the agent writes that eventfd when the
// virtual deadline comes. The user's own sets and epoll instances are never modified.
#pragma once

#include <vtime/internal/context.h>
#include <vtime/internal/waits.h>

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>

namespace vtime::detail {

// The real, untimed blocking call of an fd wait, tagged so the controller can prove the thread
// blocked in it with one read of /proc/TID/syscall (Controller, "tagged waits"). Without a
// signal mask the kernel ignores the mask-size argument of ppoll/epoll_pwait, so it carries
// abi::kTaggedWaitMark | `seq`, the enclosing WaitScope's seq: unique in the session, so two
// reads showing the same line saw the thread inside one and the same call. One such call per
// WaitScope. A caller's own mask goes to libc untagged.
// They are cancellation points like the libc calls they replace.
int tagged_ppoll(pollfd* fds, nfds_t nfds, const sigset_t* sigmask, uint64_t seq);
int tagged_epoll_wait(int epfd, epoll_event* events, int maxevents, const sigset_t* sigmask, uint64_t seq);

// An action that writes 1 to the eventfd in arg2.
AgentAction eventfd_action(int evfd);

// ppoll() over fds plus the thread's eventfd, until an fd is ready or the virtual deadline.
// Returns the number of ready user fds (0 = deadline reached) or -1 with errno.
int poll_until(ProcessContext& c, pollfd* fds, nfds_t nfds, TimePoint deadline, const sigset_t* sigmask,
               uint32_t reason);

}  // namespace vtime::detail
