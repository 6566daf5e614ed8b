// Shared machinery of the fd-readiness waits (see fd_wait.h).
#include "fd_wait.h"

#include "libc.h"

#include <unistd.h>

#include <cerrno>
#include <vector>

namespace vtime::detail {

static void write_eventfd(ProcessContext&, uint32_t, void*, uintptr_t fd) {
  uint64_t one = 1;
  ssize_t r = ::write(static_cast<int>(fd), &one, sizeof one);
  (void)r;
}

AgentAction eventfd_action(int evfd) {
  AgentAction a;
  a.fn = write_eventfd;
  a.arg2 = static_cast<uintptr_t>(evfd);
  return a;
}

int poll_until(ProcessContext& c, pollfd* fds, nfds_t nfds, TimePoint deadline, const sigset_t* sigmask,
               uint32_t reason) {
  int evfd = thread_eventfd();
  if (evfd < 0) return -1;
  drain_eventfd(evfd);  // a wake-up left over from an earlier wait must not end this one
  pollfd stack_buf[16];
  std::vector<pollfd> heap_buf;
  pollfd* all = stack_buf;
  if (nfds + 1 > 16) {
    heap_buf.resize(nfds + 1);
    all = heap_buf.data();
  }
  for (nfds_t i = 0; i < nfds; ++i) all[i] = fds[i];
  all[nfds] = pollfd{evfd, POLLIN, 0};
  AgentAction a = eventfd_action(evfd);
  int r;
  int err;
  {
    WaitScope w(c, deadline, reason, abi::kWakeAgent, &a);
    r = libc().ppoll(all, nfds + 1, nullptr, sigmask);
    err = errno;
  }
  if (r < 0) {
    errno = err;
    return -1;
  }
  if (all[nfds].revents != 0) {
    drain_eventfd(evfd);
    --r;
  }
  for (nfds_t i = 0; i < nfds; ++i) fds[i].revents = all[i].revents;
  return r;
}

}  // namespace vtime::detail
