// timerfd: an eventfd with the same read semantics carries the expiration count. read() is
// interposed only so that a timerfd armed with TFD_TIMER_CANCEL_ON_SET can fail with ECANCELED
// after a clock set; with no timerfd in the process it is one relaxed load more than libc's.
#include "export.h"

#include <vtime/internal/timers.h>

VTIME_SHIM_EXPORT int timerfd_create(int clk, int flags) { return vtime_timerfd_create(clk, flags); }
VTIME_SHIM_EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec* v, struct itimerspec* old) {
  return vtime_timerfd_settime(fd, flags, v, old);
}
VTIME_SHIM_EXPORT int timerfd_gettime(int fd, struct itimerspec* v) { return vtime_timerfd_gettime(fd, v); }
VTIME_SHIM_EXPORT ssize_t read(int fd, void* buf, size_t n) { return vtime::detail::timers_read(fd, buf, n); }
