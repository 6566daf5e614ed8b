// Clock reads: answered from shared memory, no system call.
#include "export.h"

VTIME_SHIM_EXPORT int clock_gettime(clockid_t clk, struct timespec* ts) { return vtime_clock_gettime(clk, ts); }
VTIME_SHIM_EXPORT int clock_getres(clockid_t clk, struct timespec* res) { return vtime_clock_getres(clk, res); }
VTIME_SHIM_EXPORT int gettimeofday(struct timeval* tv, void* tz) { return vtime_gettimeofday(tv, tz); }
VTIME_SHIM_EXPORT time_t time(time_t* out) { return vtime_time(out); }
VTIME_SHIM_EXPORT int timespec_get(struct timespec* ts, int base) { return vtime_timespec_get(ts, base); }
