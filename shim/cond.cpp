// Condition variables: timedwait (the condition's clock) and clockwait (C++ wait_for/wait_until).
#include "export.h"

VTIME_SHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime) {
  return vtime_pthread_cond_timedwait(cond, mutex, abstime);
}
VTIME_SHIM_EXPORT int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clk,
                                             const struct timespec* abstime) {
  return vtime_pthread_cond_clockwait(cond, mutex, clk, abstime);
}
