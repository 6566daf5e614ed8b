// Timed mutexes, rwlocks, joins and sigtimedwait.
#include "export.h"

VTIME_SHIM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* abstime) {
  return vtime_pthread_mutex_timedlock(m, abstime);
}
VTIME_SHIM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clk, const struct timespec* abstime) {
  return vtime_pthread_mutex_clocklock(m, clk, abstime);
}
VTIME_SHIM_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* l, const struct timespec* abstime) {
  return vtime_pthread_rwlock_timedrdlock(l, abstime);
}
VTIME_SHIM_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* l, const struct timespec* abstime) {
  return vtime_pthread_rwlock_timedwrlock(l, abstime);
}
VTIME_SHIM_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* l, clockid_t clk, const struct timespec* abstime) {
  return vtime_pthread_rwlock_clockrdlock(l, clk, abstime);
}
VTIME_SHIM_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* l, clockid_t clk, const struct timespec* abstime) {
  return vtime_pthread_rwlock_clockwrlock(l, clk, abstime);
}
VTIME_SHIM_EXPORT int pthread_timedjoin_np(pthread_t t, void** ret, const struct timespec* abstime) {
  return vtime_pthread_timedjoin_np(t, ret, abstime);
}
VTIME_SHIM_EXPORT int pthread_clockjoin_np(pthread_t t, void** ret, clockid_t clk, const struct timespec* abstime) {
  return vtime_pthread_clockjoin_np(t, ret, clk, abstime);
}
VTIME_SHIM_EXPORT int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  return vtime_sigtimedwait(set, info, timeout);
}
VTIME_SHIM_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* l) { return vtime_pthread_rwlock_unlock(l); }
