// Shared machinery of the fd-readiness waits (see fd_wait.h).
#include "fd_wait.h"

#include <vtime/internal/futex.h>
#include "libc.h"
#include <vtime/internal/serial_gate.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace vtime::detail {

static void write_eventfd(ProcessContext&, uint32_t, void*, uintptr_t fd) {
  uint64_t one = 1;
  ssize_t r = ::write(static_cast<int>(fd), &one, sizeof one);
  (void)r;
}

namespace {

// A raw system call that is a cancellation point, as libc's own poll is: asynchronous
// cancellation is enabled around it (what glibc does for its blocking calls).
template <class F>
long cancellable(F&& call) {
  int old = PTHREAD_CANCEL_DEFERRED;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
  long r = call();
  pthread_setcanceltype(old, nullptr);
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return r;
}

}  // namespace

int tagged_ppoll(pollfd* fds, nfds_t nfds, const sigset_t* sigmask, uint64_t seq) {
  const long tag = static_cast<long>(abi::kTaggedWaitMark | seq);
  if (sigmask) return libc().ppoll(fds, nfds, nullptr, sigmask);
  return static_cast<int>(cancellable([&] {
    return raw_syscall6(SYS_ppoll, reinterpret_cast<long>(fds), static_cast<long>(nfds), 0, 0, tag, 0);
  }));
}

int tagged_epoll_wait(int epfd, epoll_event* events, int maxevents, const sigset_t* sigmask, uint64_t seq) {
  const long tag = static_cast<long>(abi::kTaggedWaitMark | seq);
  if (sigmask) return libc().epoll_pwait(epfd, events, maxevents, -1, sigmask);
  return static_cast<int>(cancellable([&] {
    return raw_syscall6(SYS_epoll_pwait, epfd, reinterpret_cast<long>(events), maxevents, -1, 0, tag);
  }));
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
    r = tagged_ppoll(all, nfds + 1, sigmask, w.seq());
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
  if (r > 0 && serial_hold(c)) r = refresh_poll(fds, nfds, r);
  return r;
}

}  // namespace vtime::detail
