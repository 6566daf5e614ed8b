/* Stand-in for libvtime's C API with no session (every call goes to libc), used to test
 * vtime/std.h only when the real libvtime target is not part of the build. */
#define _GNU_SOURCE
#include <vtime/vtime.h>

#include <stdarg.h>
#include <sys/syscall.h>

int vtime_clock_gettime(clockid_t clk, struct timespec* ts) { return clock_gettime(clk, ts); }
int vtime_nanosleep(const struct timespec* req, struct timespec* rem) { return nanosleep(req, rem); }
int vtime_pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clk, const struct timespec* at) {
  return pthread_cond_clockwait(c, m, clk, at);
}
int vtime_pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clk, const struct timespec* at) {
  return pthread_mutex_clocklock(m, clk, at);
}
long vtime_syscall(long number, ...) {
  va_list ap;
  long a[6];
  va_start(ap, number);
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  return syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
