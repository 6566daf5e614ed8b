// Setting the clock: the tree's virtual clock moves, the host's never does.
#include "export.h"

#include <sys/timex.h>

VTIME_SHIM_EXPORT int clock_settime(clockid_t clk, const struct timespec* ts) { return vtime_clock_settime(clk, ts); }
VTIME_SHIM_EXPORT int settimeofday(const struct timeval* tv, const struct timezone* tz) {
  return vtime_settimeofday(tv, tz);
}
// Gone from glibc's API since 2.31, still linked by old binaries (an unversioned definition
// satisfies their stime@GLIBC_2.2.5).
VTIME_SHIM_EXPORT int stime(const time_t* t) { return vtime_stime(t); }
VTIME_SHIM_EXPORT int adjtimex(struct timex* tx) { return vtime_adjtimex(tx); }
VTIME_SHIM_EXPORT int ntp_adjtime(struct timex* tx) { return vtime_adjtimex(tx); }
VTIME_SHIM_EXPORT int clock_adjtime(clockid_t clk, struct timex* tx) { return vtime_clock_adjtime(clk, tx); }
VTIME_SHIM_EXPORT int adjtime(const struct timeval* delta, struct timeval* olddelta) {
  return vtime_adjtime(delta, olddelta);
}

// ntp_gettime(3): glibc reads its own internal adjtimex, out of the shim's reach. The header
// redirects ntp_gettime to ntp_gettimex (the struct with `tai`, since glibc 2.12); binaries
// linked before that call ntp_gettime@GLIBC_2.1, whose struct stops after esterror: that one
// gets only its three fields.
VTIME_SHIM_EXPORT int ntp_gettimex(struct ntptimeval* ntv) { return vtime_ntp_gettime(ntv); }
extern "C" int vtime_shim_ntp_gettime_old(struct ntptimeval* ntv) __asm__("ntp_gettime");
VTIME_SHIM_EXPORT int vtime_shim_ntp_gettime_old(struct ntptimeval* ntv) {
  if (!ntv) return vtime_ntp_gettime(ntv);
  struct ntptimeval full;
  int r = vtime_ntp_gettime(&full);
  ntv->time = full.time;
  ntv->maxerror = full.maxerror;
  ntv->esterror = full.esterror;
  return r;
}
