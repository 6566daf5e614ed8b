// Sleeps: sleep() and usleep() call glibc's internal __nanosleep, so each is wrapped itself.
#include "export.h"
#include "libc.h"
#include "sanitizer_runtime.h"

VTIME_SHIM_EXPORT int nanosleep(const struct timespec* req, struct timespec* rem) { return vtime_nanosleep(req, rem); }
VTIME_SHIM_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec* req, struct timespec* rem) {
  return vtime_clock_nanosleep(clk, flags, req, rem);
}
VTIME_SHIM_EXPORT int usleep(useconds_t usec) { return vtime_usleep(usec); }
VTIME_SHIM_EXPORT unsigned int sleep(unsigned int seconds) { return vtime_sleep(seconds); }
VTIME_SHIM_EXPORT int sched_yield(void) {
  // A sanitizer's own busy-wait is not the program's computation: never charged.
  if (vtime::shim::in_sanitizer_runtime(__builtin_return_address(0))) return vtime::detail::libc().sched_yield();
  return vtime_sched_yield();
}
