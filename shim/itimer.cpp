// alarm and ITIMER_REAL (the other itimers count CPU time and pass through).
#include "export.h"

VTIME_SHIM_EXPORT unsigned int alarm(unsigned int seconds) { return vtime_alarm(seconds); }
VTIME_SHIM_EXPORT int setitimer(int which, const struct itimerval* v, struct itimerval* old) {
  return vtime_setitimer(which, v, old);
}
VTIME_SHIM_EXPORT int getitimer(int which, struct itimerval* v) { return vtime_getitimer(which, v); }
