// select and pselect.
#include "export.h"

VTIME_SHIM_EXPORT int select(int nfds, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout) {
  return vtime_select(nfds, r, w, e, timeout);
}
VTIME_SHIM_EXPORT int pselect(int nfds, fd_set* r, fd_set* w, fd_set* e, const struct timespec* timeout,
                              const sigset_t* sigmask) {
  return vtime_pselect(nfds, r, w, e, timeout, sigmask);
}
