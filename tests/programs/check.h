/* check.h: helpers shared by the vtime test programs (C11 and C++20).
 *
 * Each test program is one small real program in the rr style: it checks its own behaviour,
 * prints `EXIT-SUCCESS` and exits 0 when every check passed, otherwise prints each failed check
 * (file:line, expression, values) and exits 1. The same binary runs natively and under
 * `vtime exec`; it tells the two apart by the VTIME_SESSION environment variable.
 *
 * Timing rules the checks encode:
 *  - virtual time: the clock is frozen while threads compute and jumps to the next deadline, so
 *    every deadline is hit EXACTLY (a 3 s sleep advances CLOCK_MONOTONIC by 3,000,000,000 ns);
 *  - native time: a wait may end late, by any amount on a loaded machine, but never early, so
 *    the checks are one-sided: an elapsed time is at least the expected one, a remaining time is
 *    between 0 and the timer's whole duration. No upper bound on real time: that would be a
 *    timing assertion, which fails under load (timing targets live in bench/).
 * Durations are written in "units": vt_unit(native) is one hour under virtual time (proving that
 * virtual time does not wait) and the given short duration natively (keeping the suite fast).
 *
 * Example:
 *   int main(void) {
 *     vt_begin("example");
 *     const int64_t u = vt_unit(100 * VT_NS_PER_MS);
 *     int64_t t0 = vt_mono();
 *     vt_sleep(3 * u);
 *     CHECK_ELAPSED(vt_mono() - t0, 3 * u);
 *     return vt_finish();
 *   }
 */
#ifndef VTIME_TESTS_PROGRAMS_CHECK_H
#define VTIME_TESTS_PROGRAMS_CHECK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define VT_NS_PER_SEC INT64_C(1000000000)
#define VT_NS_PER_MS INT64_C(1000000)
#define VT_NS_PER_US INT64_C(1000)

/* One duration unit under virtual time: an hour, which would never finish if time were real. */
#define VT_VIRTUAL_UNIT_NS (3600 * VT_NS_PER_SEC)

/* Number of failed checks so far; updated atomically because checks run on several threads. */
static int vt_failures_;

static inline int vt_virtual(void) {
  const char* s = getenv("VTIME_SESSION");
  return s != NULL && s[0] != '\0';
}

static inline int64_t vt_unit(int64_t native_ns) {
  return vt_virtual() ? VT_VIRTUAL_UNIT_NS : native_ns;
}

static inline void vt_fail(const char* file, int line, const char* what) {
  __atomic_add_fetch(&vt_failures_, 1, __ATOMIC_SEQ_CST);
  printf("%s:%d: CHECK FAILED: %s\n", file, line, what);
}

/* A failure after which going on makes no sense (a system call that must not fail). */
static inline void vt_die(const char* file, int line, const char* what, int err) {
  printf("%s:%d: FATAL: %s: %s\nFAILED\n", file, line, what, strerror(err));
  fflush(stdout);
  _exit(1);
}

static inline long vt_require_sys(long r, const char* expr, const char* file, int line) {
  if (r == -1) vt_die(file, line, expr, errno);
  return r;
}

static inline int vt_require_zero(int r, const char* expr, const char* file, int line) {
  if (r != 0) vt_die(file, line, expr, r);
  return r;
}

/* SYS(expr): expr is a libc call returning -1 and setting errno on failure; dies on failure. */
#define SYS(expr) vt_require_sys((long)(expr), #expr, __FILE__, __LINE__)
/* PT(expr): expr is a pthread-style call returning 0 or an error number; dies on failure. */
#define PT(expr) vt_require_zero((expr), #expr, __FILE__, __LINE__)

#define CHECK(cond)                                        \
  do {                                                     \
    if (!(cond)) vt_fail(__FILE__, __LINE__, #cond);       \
  } while (0)

/* CHECK_EQ(a, b): integer equality, printing both values. */
#define CHECK_EQ(a, b)                                                               \
  do {                                                                               \
    long long vt_a_ = (long long)(a), vt_b_ = (long long)(b);                        \
    if (vt_a_ != vt_b_) {                                                            \
      char vt_msg_[512];                                                             \
      snprintf(vt_msg_, sizeof vt_msg_, "%s == %s (%lld != %lld)", #a, #b, vt_a_, vt_b_); \
      vt_fail(__FILE__, __LINE__, vt_msg_);                                          \
    }                                                                                \
  } while (0)

static inline void vt_check_elapsed(int64_t actual, int64_t expected, const char* expr,
                                    const char* file, int line) {
  const int ok = vt_virtual() ? actual == expected : actual >= expected;
  if (!ok) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s: elapsed %lld ns, expected %lld ns %s", expr,
             (long long)actual, (long long)expected,
             vt_virtual() ? "exactly (virtual)" : "at least (native: never early)");
    vt_fail(file, line, msg);
  }
}

static inline void vt_check_remaining(int64_t actual, int64_t expected, int64_t total, const char* expr,
                                      const char* file, int line) {
  const int ok = vt_virtual() ? actual == expected : actual >= 0 && actual <= total;
  if (!ok) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s: remaining %lld ns, expected %lld ns %s %lld ns", expr,
             (long long)actual, (long long)expected,
             vt_virtual() ? "exactly (virtual); whole duration" : "(native: between 0 and the whole duration)",
             (long long)total);
    vt_fail(file, line, msg);
  }
}

/* CHECK_ELAPSED(actual, expected): a wait that lasted `actual` ns was meant to last `expected`.
 * Virtual: exact. Native: never early (late by any amount: load). */
#define CHECK_ELAPSED(actual, expected) \
  vt_check_elapsed((actual), (expected), #actual, __FILE__, __LINE__)
/* CHECK_REMAINING(actual, expected, total): a reported remaining time (rem of an interrupted
 * sleep, timer_gettime, getitimer...) of a wait or timer of `total` ns. Virtual: exactly
 * `expected`. Native: between 0 and `total` (how much is left depends on how late each step ran:
 * the arming, the wait's start, the signal). */
#define CHECK_REMAINING(actual, expected, total) \
  vt_check_remaining((actual), (expected), (total), #actual, __FILE__, __LINE__)

static inline int64_t vt_ts_ns(struct timespec ts) {
  return (int64_t)ts.tv_sec * VT_NS_PER_SEC + ts.tv_nsec;
}

static inline struct timespec vt_ts(int64_t ns) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ns / VT_NS_PER_SEC);
  ts.tv_nsec = (long)(ns % VT_NS_PER_SEC);
  return ts;
}

static inline int64_t vt_tv_ns(struct timeval tv) {
  return (int64_t)tv.tv_sec * VT_NS_PER_SEC + (int64_t)tv.tv_usec * VT_NS_PER_US;
}

/* Truncates to microseconds: keep durations whole microseconds when they go through a timeval. */
static inline struct timeval vt_tv(int64_t ns) {
  struct timeval tv;
  tv.tv_sec = (time_t)(ns / VT_NS_PER_SEC);
  tv.tv_usec = (suseconds_t)(ns % VT_NS_PER_SEC / VT_NS_PER_US);
  return tv;
}

static inline int64_t vt_now(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) vt_die(__FILE__, __LINE__, "clock_gettime", errno);
  return vt_ts_ns(ts);
}

static inline int64_t vt_mono(void) { return vt_now(CLOCK_MONOTONIC); }
static inline int64_t vt_real(void) { return vt_now(CLOCK_REALTIME); }

/* Sleeps `ns` on CLOCK_MONOTONIC, resuming after signal handlers. */
static inline void vt_sleep(int64_t ns) {
  struct timespec req = vt_ts(ns);
  struct timespec rem;
  while (nanosleep(&req, &rem) != 0) {
    if (errno != EINTR) vt_die(__FILE__, __LINE__, "nanosleep", errno);
    req = rem;
  }
}

/* Prints the mode and makes stdout unbuffered (so output is never duplicated by fork and
 * interleaves with the failure messages of other threads in order). */
static inline void vt_begin(const char* name) {
  setvbuf(stdout, NULL, _IONBF, 0);
  printf("%s: %s time\n", name, vt_virtual() ? "virtual" : "native");
}

static inline int vt_finish(void) {
  const int failures = __atomic_load_n(&vt_failures_, __ATOMIC_SEQ_CST);
  if (failures != 0) {
    printf("FAILED: %d check(s)\n", failures);
    return 1;
  }
  printf("EXIT-SUCCESS\n");
  return 0;
}

#endif /* VTIME_TESTS_PROGRAMS_CHECK_H */
