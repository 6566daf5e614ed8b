// epoll_wait, epoll_pwait, epoll_pwait2.
#include "export.h"

VTIME_SHIM_EXPORT int epoll_wait(int epfd, struct epoll_event* ev, int maxevents, int timeout) {
  return vtime_epoll_wait(epfd, ev, maxevents, timeout);
}
VTIME_SHIM_EXPORT int epoll_pwait(int epfd, struct epoll_event* ev, int maxevents, int timeout, const sigset_t* ss) {
  return vtime_epoll_pwait(epfd, ev, maxevents, timeout, ss);
}
VTIME_SHIM_EXPORT int epoll_pwait2(int epfd, struct epoll_event* ev, int maxevents, const struct timespec* timeout,
                                   const sigset_t* ss) {
  return vtime_epoll_pwait2(epfd, ev, maxevents, timeout, ss);
}
