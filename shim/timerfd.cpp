// timerfd: an eventfd with the same read semantics carries the expiration count.
#include "export.h"

VTIME_SHIM_EXPORT int timerfd_create(int clk, int flags) { return vtime_timerfd_create(clk, flags); }
VTIME_SHIM_EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec* v, struct itimerspec* old) {
  return vtime_timerfd_settime(fd, flags, v, old);
}
VTIME_SHIM_EXPORT int timerfd_gettime(int fd, struct itimerspec* v) { return vtime_timerfd_gettime(fd, v); }
