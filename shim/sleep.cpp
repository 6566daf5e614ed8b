// Sleeps: sleep() and usleep() call glibc's internal __nanosleep, so each is wrapped itself.
#include "export.h"

VTIME_SHIM_EXPORT int nanosleep(const struct timespec* req, struct timespec* rem) { return vtime_nanosleep(req, rem); }
VTIME_SHIM_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec* req, struct timespec* rem) {
  return vtime_clock_nanosleep(clk, flags, req, rem);
}
VTIME_SHIM_EXPORT int usleep(useconds_t usec) { return vtime_usleep(usec); }
VTIME_SHIM_EXPORT unsigned int sleep(unsigned int seconds) { return vtime_sleep(seconds); }
VTIME_SHIM_EXPORT int sched_yield(void) { return vtime_sched_yield(); }
