// poll and ppoll.
#include "export.h"

VTIME_SHIM_EXPORT int poll(struct pollfd* fds, nfds_t nfds, int timeout) { return vtime_poll(fds, nfds, timeout); }
VTIME_SHIM_EXPORT int ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout, const sigset_t* sigmask) {
  return vtime_ppoll(fds, nfds, timeout, sigmask);
}
