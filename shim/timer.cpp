// POSIX timers on the virtual clocks (CPU-time clocks pass through).
#include "export.h"

VTIME_SHIM_EXPORT int timer_create(clockid_t clk, struct sigevent* sev, timer_t* id) { return vtime_timer_create(clk, sev, id); }
VTIME_SHIM_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec* v, struct itimerspec* old) {
  return vtime_timer_settime(id, flags, v, old);
}
VTIME_SHIM_EXPORT int timer_gettime(timer_t id, struct itimerspec* v) { return vtime_timer_gettime(id, v); }
VTIME_SHIM_EXPORT int timer_getoverrun(timer_t id) { return vtime_timer_getoverrun(id); }
VTIME_SHIM_EXPORT int timer_delete(timer_t id) { return vtime_timer_delete(id); }
