// C API: poll and ppoll with virtual timeouts.
#include <vtime/vtime.h>

#include <vtime/internal/cpu_charge.h>
#include "fd_wait.h"
#include "libc.h"
#include <vtime/internal/serial_gate.h>

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

extern "C" {

int vtime_poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) {
  ProcessContext* c = context();
  if (!c) return libc().poll(fds, nfds, timeout_ms);
  if (timeout_ms == 0) return charge_if_none(*c, libc().poll(fds, nfds, 0));
  if (timeout_ms < 0) {
    // Infinite: recorded for the deadlock report, woken only by the fds.
    int r, err;
    {
      WaitScope w(*c, TimePoint::never(), abi::kReasonPoll, abi::kWakeNone);
      r = tagged_ppoll(fds, nfds, nullptr, w.seq());
      err = errno;
    }
    if (r > 0 && serial_hold(*c)) r = refresh_poll(fds, nfds, r);
    errno = err;
    return r;
  }
  return poll_until(*c, fds, nfds, now(*c) + milliseconds(timeout_ms), nullptr, abi::kReasonPoll);
}

int vtime_ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout, const sigset_t* sigmask) {
  ProcessContext* c = context();
  if (!c) return libc().ppoll(fds, nfds, timeout, sigmask);
  if (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0) {
    return charge_if_none(*c, libc().ppoll(fds, nfds, timeout, sigmask));
  }
  if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L)) {
    errno = EINVAL;
    return -1;
  }
  if (!timeout) {
    int r, err;
    {
      WaitScope w(*c, TimePoint::never(), abi::kReasonPoll, abi::kWakeNone);
      r = tagged_ppoll(fds, nfds, sigmask, w.seq());
      err = errno;
    }
    if (r > 0 && serial_hold(*c)) r = refresh_poll(fds, nfds, r);
    errno = err;
    return r;
  }
  return poll_until(*c, fds, nfds, now(*c) + from_timespec(*timeout), sigmask, abi::kReasonPoll);
}

}  // extern "C"
