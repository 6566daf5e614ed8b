/* timerfd_periodic: timerfd semantics that programs rely on.
 *  1. A periodic CLOCK_MONOTONIC timer (period I) watched with epoll: each wake-up comes at
 *     exactly k*I and reading gives an expiration count of 1.
 *  2. Then the thread sleeps 3.5*I without reading: the next read returns 3 (one jump of the
 *     clock covers several periods) and timerfd_gettime shows 0.5*I left.
 *  3. Disarming: timerfd_gettime reports zero, nothing more expires, a non-blocking read fails
 *     with EAGAIN.
 *  4. TFD_TIMER_ABSTIME on CLOCK_MONOTONIC (a blocking read) and on CLOCK_REALTIME (poll), and
 *     an absolute deadline already in the past (expires at once).
 *  5. timerfd_gettime remaining time after a partial sleep; timerfd_settime's old value.
 */
#include "check.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

static int64_t g_period;

static uint64_t read_count(int tfd) {
  uint64_t count = 0;
  CHECK_EQ(SYS(read(tfd, &count, sizeof count)), (long)sizeof count);
  return count;
}

static struct itimerspec itimer(int64_t value, int64_t interval) {
  struct itimerspec its;
  its.it_value = vt_ts(value);
  its.it_interval = vt_ts(interval);
  return its;
}

static void periodic(void) {
  const int64_t period = g_period;
  const int tfd = (int)SYS(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  const int epfd = (int)SYS(epoll_create1(EPOLL_CLOEXEC));
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  ev.data.fd = tfd;
  SYS(epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev));

  const int64_t t0 = vt_mono();
  const struct itimerspec its = itimer(period, period);
  SYS(timerfd_settime(tfd, 0, &its, NULL));

  /* 1. One expiration per wake-up. */
  uint64_t total = 0;
  for (int k = 1; k <= 3; ++k) {
    struct epoll_event out;
    CHECK_EQ(SYS(epoll_wait(epfd, &out, 1, -1)), 1);
    CHECK_EQ(out.data.fd, tfd);
    const uint64_t count = read_count(tfd);
    total += count;
    const int64_t elapsed = vt_mono() - t0;
    printf("  periodic wake %d: count %llu after %lld ns\n", k, (unsigned long long)count,
           (long long)elapsed);
    if (vt_virtual()) CHECK_EQ(count, 1);
    CHECK(count >= 1);
    CHECK_ELAPSED(elapsed, (int64_t)total * period);
  }

  /* 2. Several periods in one sleep: the counter accumulates. */
  vt_sleep(3 * period + period / 2);
  const uint64_t count = read_count(tfd);
  const int64_t elapsed = vt_mono() - t0;
  printf("  after sleeping 3.5 periods: count %llu after %lld ns\n", (unsigned long long)count,
         (long long)elapsed);
  if (vt_virtual()) {
    CHECK_EQ(count, 3);
    CHECK_EQ(elapsed, 6 * period + period / 2);
  } else {
    CHECK(count >= 3); /* natively more when the sleep ends late */
  }
  total += count;
  struct itimerspec cur;
  SYS(timerfd_gettime(tfd, &cur));
  if (vt_virtual()) CHECK_EQ(vt_ts_ns(cur.it_value), period / 2);
  CHECK(vt_ts_ns(cur.it_value) > 0 && vt_ts_ns(cur.it_value) <= period);
  CHECK_EQ(vt_ts_ns(cur.it_interval), period);

  /* 3. Disarm: nothing more expires. */
  const struct itimerspec zero = itimer(0, 0);
  SYS(timerfd_settime(tfd, 0, &zero, NULL));
  SYS(timerfd_gettime(tfd, &cur));
  CHECK_EQ(vt_ts_ns(cur.it_value), 0);
  CHECK_EQ(vt_ts_ns(cur.it_interval), 0);
  const int64_t t1 = vt_mono();
  struct pollfd p = {.fd = tfd, .events = POLLIN, .revents = 0};
  CHECK_EQ(SYS(poll(&p, 1, (int)(2 * period / VT_NS_PER_MS))), 0);
  CHECK_ELAPSED(vt_mono() - t1, 2 * period);
  SYS(fcntl(tfd, F_SETFL, O_NONBLOCK));
  uint64_t dummy;
  CHECK(read(tfd, &dummy, sizeof dummy) == -1 && errno == EAGAIN);

  close(epfd);
  close(tfd);
}

static void absolute(void) {
  const int64_t period = g_period;
  /* CLOCK_MONOTONIC, absolute, blocking read. */
  int tfd = (int)SYS(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  int64_t t0 = vt_mono();
  struct itimerspec its = itimer(t0 + 2 * period, 0);
  SYS(timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL));
  CHECK_EQ(read_count(tfd), 1);
  int64_t elapsed = vt_mono() - t0;
  printf("  TFD_TIMER_ABSTIME MONOTONIC read after %lld ns\n", (long long)elapsed);
  CHECK_ELAPSED(elapsed, 2 * period);

  /* An absolute deadline already past expires at once: no waiting at all. */
  t0 = vt_mono();
  its = itimer(t0 - period, 0);
  SYS(timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL));
  CHECK_EQ(read_count(tfd), 1);
  CHECK_ELAPSED(vt_mono() - t0, 0);
  close(tfd);

  /* CLOCK_REALTIME, absolute, poll. */
  tfd = (int)SYS(timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK));
  t0 = vt_mono();
  const int64_t deadline = vt_real() + period;
  its = itimer(deadline, 0);
  SYS(timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL));
  struct pollfd p = {.fd = tfd, .events = POLLIN, .revents = 0};
  CHECK_EQ(SYS(poll(&p, 1, -1)), 1);
  const int64_t real = vt_real();
  elapsed = vt_mono() - t0;
  printf("  TFD_TIMER_ABSTIME REALTIME ready after %lld ns\n", (long long)elapsed);
  CHECK_EQ(read_count(tfd), 1);
  CHECK_ELAPSED(real - deadline, 0);
  CHECK_ELAPSED(elapsed, period);
  close(tfd);
}

static void remaining(void) {
  const int64_t period = g_period;
  const int tfd = (int)SYS(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  const struct itimerspec its = itimer(5 * period, period);
  SYS(timerfd_settime(tfd, 0, &its, NULL));
  vt_sleep(2 * period);
  struct itimerspec cur;
  SYS(timerfd_gettime(tfd, &cur));
  printf("  timerfd_gettime after 2 of 5 periods: %lld ns left\n",
         (long long)vt_ts_ns(cur.it_value));
  CHECK_REMAINING(vt_ts_ns(cur.it_value), 3 * period, 5 * period);
  CHECK_EQ(vt_ts_ns(cur.it_interval), period);

  /* Disarming returns the old setting. */
  const struct itimerspec zero = itimer(0, 0);
  struct itimerspec old;
  SYS(timerfd_settime(tfd, 0, &zero, &old));
  CHECK_REMAINING(vt_ts_ns(old.it_value), 3 * period, 5 * period);
  CHECK_EQ(vt_ts_ns(old.it_interval), period);
  close(tfd);
}

int main(void) {
  vt_begin("timerfd_periodic");
  g_period = vt_unit(80 * VT_NS_PER_MS);
  periodic();
  absolute();
  remaining();
  return vt_finish();
}
