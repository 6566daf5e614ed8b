// C API: select and pselect with virtual timeouts. The thread's eventfd joins the read set.
#include <vtime/vtime.h>

#include <vtime/internal/cpu_charge.h>
#include <vtime/internal/serial_gate.h>
#include "fd_wait.h"
#include "libc.h"

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {

int select_until(ProcessContext& c, int nfds, fd_set* r, fd_set* w, fd_set* e, TimePoint deadline,
                 const sigset_t* sigmask) {
  int evfd = thread_eventfd();
  if (evfd < 0 || evfd >= FD_SETSIZE) return -1;
  drain_eventfd(evfd);
  fd_set local;
  FD_ZERO(&local);
  fd_set* rs = r ? r : &local;
  FD_SET(evfd, rs);
  AgentAction a = eventfd_action(evfd);
  int n, err;
  {
    WaitScope ws(c, deadline, abi::kReasonSelect, abi::kWakeAgent, &a);
    n = libc().pselect(nfds > evfd ? nfds : evfd + 1, rs, w, e, nullptr, sigmask);
    err = errno;
  }
  if (n < 0) {
    FD_CLR(evfd, rs);
    errno = err;
    return -1;
  }
  if (FD_ISSET(evfd, rs)) {
    FD_CLR(evfd, rs);
    drain_eventfd(evfd);
    --n;
  }
  return n;
}

template <typename Real>
int infinite(ProcessContext& c, Real&& real) {
  int r, err;
  {
    WaitScope w(c, TimePoint::never(), abi::kReasonSelect, abi::kWakeNone);
    r = real();
    err = errno;
  }
  // What a held select returns is what it saw when it woke: its sets are overwritten, there is
  // nothing to look again with (poll and epoll look again: serial_gate.h).
  if (r > 0) serial_hold(c);
  errno = err;
  return r;
}

}  // namespace

extern "C" {

int vtime_select(int nfds, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout) {
  ProcessContext* c = context();
  if (!c) return libc().select(nfds, r, w, e, timeout);
  if (timeout && timeout->tv_sec == 0 && timeout->tv_usec == 0) {
    return charge_if_none(*c, libc().select(nfds, r, w, e, timeout));
  }
  if (!timeout) return infinite(*c, [&] { return libc().select(nfds, r, w, e, nullptr); });
  if (timeout->tv_sec < 0 || timeout->tv_usec < 0) {
    errno = EINVAL;
    return -1;
  }
  TimePoint deadline = now(*c) + from_timeval(*timeout);
  int n = select_until(*c, nfds, r, w, e, deadline, nullptr);
  // Linux select() leaves the unslept time in *timeout.
  Duration left = deadline - now(*c);
  *timeout = to_timeval(left < Duration::zero() ? Duration::zero() : left);
  return n;
}

int vtime_pselect(int nfds, fd_set* r, fd_set* w, fd_set* e, const struct timespec* timeout, const sigset_t* sigmask) {
  ProcessContext* c = context();
  if (!c) return libc().pselect(nfds, r, w, e, timeout, sigmask);
  if (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0) {
    return charge_if_none(*c, libc().pselect(nfds, r, w, e, timeout, sigmask));
  }
  if (!timeout) return infinite(*c, [&] { return libc().pselect(nfds, r, w, e, nullptr, sigmask); });
  if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L) {
    errno = EINVAL;
    return -1;
  }
  return select_until(*c, nfds, r, w, e, now(*c) + from_timespec(*timeout), sigmask);
}

}  // extern "C"
