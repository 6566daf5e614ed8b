// C API: epoll_wait/epoll_pwait/epoll_pwait2 with virtual timeouts. An epoll fd is itself
// pollable, so we poll it together with the thread's eventfd and never touch the user's set.
#include <vtime/vtime.h>

#include <vtime/internal/cpu_charge.h>
#include <vtime/internal/serial_gate.h>
#include "fd_wait.h"
#include "libc.h"

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {

int epoll_until(ProcessContext& c, int epfd, epoll_event* events, int maxevents, TimePoint deadline,
                const sigset_t* sigmask) {
  if (maxevents <= 0) {
    errno = EINVAL;
    return -1;
  }
  for (;;) {
    pollfd p{epfd, POLLIN, 0};
    int r = poll_until(c, &p, 1, deadline, sigmask, abi::kReasonEpoll);
    if (r < 0) return -1;
    if (r == 0) return 0;  // the virtual deadline came first
    if (p.revents & (POLLNVAL)) {
      errno = EBADF;
      return -1;
    }
    int n = libc().epoll_wait(epfd, events, maxevents, 0);
    if (n != 0) return n;
    // Another thread took the events first: wait again for what is left of the timeout.
    if (now(c) >= deadline) return 0;
  }
}

// `real` gets the wait's seq, the tag of a tagged call.
template <typename Real>
int infinite(ProcessContext& c, int epfd, epoll_event* events, int maxevents, Real&& real) {
  int r, err;
  {
    WaitScope w(c, TimePoint::never(), abi::kReasonEpoll, abi::kWakeNone);
    r = real(w.seq());
    err = errno;
  }
  if (r > 0 && serial_hold(c) && r < maxevents) {
    // Look again (serial_gate.h): what came since the wait woke joins what it took then.
    int m = libc().epoll_wait(epfd, events + r, maxevents - r, 0);
    if (m > 0) r = static_cast<int>(merge_epoll_events(events, static_cast<size_t>(r), static_cast<size_t>(m)));
  }
  errno = err;
  return r;
}

}  // namespace

extern "C" {

int vtime_epoll_wait(int epfd, struct epoll_event* events, int maxevents, int timeout_ms) {
  ProcessContext* c = context();
  if (!c) return libc().epoll_wait(epfd, events, maxevents, timeout_ms);
  if (timeout_ms == 0) return charge_if_none(*c, libc().epoll_wait(epfd, events, maxevents, 0));
  if (timeout_ms < 0) return infinite(*c, epfd, events, maxevents, [&](uint64_t tag) { return tagged_epoll_wait(epfd, events, maxevents, nullptr, tag); });
  return epoll_until(*c, epfd, events, maxevents, now(*c) + milliseconds(timeout_ms), nullptr);
}

int vtime_epoll_pwait(int epfd, struct epoll_event* events, int maxevents, int timeout_ms, const sigset_t* sigmask) {
  ProcessContext* c = context();
  if (!c) return libc().epoll_pwait(epfd, events, maxevents, timeout_ms, sigmask);
  if (timeout_ms == 0) return charge_if_none(*c, libc().epoll_pwait(epfd, events, maxevents, 0, sigmask));
  if (timeout_ms < 0) return infinite(*c, epfd, events, maxevents, [&](uint64_t tag) { return tagged_epoll_wait(epfd, events, maxevents, sigmask, tag); });
  return epoll_until(*c, epfd, events, maxevents, now(*c) + milliseconds(timeout_ms), sigmask);
}

int vtime_epoll_pwait2(int epfd, struct epoll_event* events, int maxevents, const struct timespec* timeout,
                       const sigset_t* sigmask) {
  ProcessContext* c = context();
  if (!c) return libc().epoll_pwait2(epfd, events, maxevents, timeout, sigmask);
  if (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0) {
    return charge_if_none(*c, libc().epoll_pwait2(epfd, events, maxevents, timeout, sigmask));
  }
  if (!timeout) return infinite(*c, epfd, events, maxevents, [&](uint64_t tag) { return tagged_epoll_wait(epfd, events, maxevents, sigmask, tag); });
  if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L) {
    errno = EINVAL;
    return -1;
  }
  return epoll_until(*c, epfd, events, maxevents, now(*c) + from_timespec(*timeout), sigmask);
}

}  // extern "C"
