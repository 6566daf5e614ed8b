/* clock_set: setting the clock under vtime moves the tree's virtual CLOCK_REALTIME only.
 *
 * With CAP_SYS_TIME (root), and only ever under vtime inside tests/programs/no_clock_set (which
 * kills any process that reaches the kernel's clock-setting calls): sets CLOCK_REALTIME one hour
 * ahead and checks that
 *   - CLOCK_REALTIME is one hour ahead, CLOCK_MONOTONIC did not move, a forked child agrees;
 *   - an absolute CLOCK_REALTIME clock_nanosleep and pthread_cond_timedwait (realtime by
 *     default) re-evaluate: due two hours after the start, they end one hour (monotonic) later;
 *   - an absolute CLOCK_REALTIME timerfd re-evaluates, and one armed with
 *     TFD_TIMER_CANCEL_ON_SET reads ECANCELED; relative sleeps do not move;
 *   - settimeofday, adjtimex(ADJ_SETOFFSET) and clock_adjtime move it too; EINVAL for
 *     CLOCK_MONOTONIC and a bad timespec, as on Linux.
 * Without CAP_SYS_TIME (natively or under vtime): EPERM from every setting call, EINVAL first for
 * bad arguments, a read-only adjtimex works, and the clock does not move.
 * Either way ntp_gettime (glibc's ntp_gettimex, which reads glibc's internal adjtimex) reports
 * the clock the program sees: under vtime the virtual one, after any set.
 *
 * Never run it as root outside vtime and the guard: it would set this machine's clock.
 */
#include "check.h"

#include <linux/capability.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/wait.h>

#define HOUR (3600 * VT_NS_PER_SEC)

static int64_t g_mono0, g_real0;
static int64_t g_abs_sleep_end, g_cond_end;

static int may_set_time(void) {
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capget, &hdr, data) != 0) return 0;
  return (data[CAP_SYS_TIME / 32].effective & (1u << (CAP_SYS_TIME % 32))) != 0;
}

static void* abs_sleeper(void* arg) {
  (void)arg;
  struct timespec until = vt_ts(g_real0 + 2 * HOUR);
  int r;
  while ((r = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, NULL)) == EINTR) {
  }
  CHECK_EQ(r, 0);
  g_abs_sleep_end = vt_mono() - g_mono0;
  return NULL;
}

static void* cond_waiter(void* arg) {
  (void)arg;
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;  /* CLOCK_REALTIME */
  struct timespec until = vt_ts(g_real0 + 2 * HOUR);
  PT(pthread_mutex_lock(&m));
  int r = 0;
  while (r == 0) r = pthread_cond_timedwait(&cv, &m, &until);
  CHECK_EQ(r, ETIMEDOUT);
  PT(pthread_mutex_unlock(&m));
  g_cond_end = vt_mono() - g_mono0;
  return NULL;
}

static void privileged(void) {
  g_mono0 = vt_mono();
  g_real0 = vt_real();
  pthread_t a, b;
  PT(pthread_create(&a, NULL, abs_sleeper, NULL));
  PT(pthread_create(&b, NULL, cond_waiter, NULL));
  int tfd = (int)SYS(timerfd_create(CLOCK_REALTIME, 0));
  struct itimerspec its = {{0, 0}, vt_ts(g_real0 + 3 * HOUR)};
  SYS(timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL));
  int cfd = (int)SYS(timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK));
  its.it_value = vt_ts(g_real0 + 5 * HOUR);
  SYS(timerfd_settime(cfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL));
  vt_sleep(VT_NS_PER_SEC);  /* the waiters are registered by now (virtual time waited for them) */

  /* Errors first, as the kernel checks them: a clock that cannot be set, a bad value. */
  struct timespec bad = {1, 1000000000L};
  CHECK_EQ(clock_settime(CLOCK_MONOTONIC, &bad), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(clock_settime(CLOCK_REALTIME, &bad), -1);
  CHECK_EQ(errno, EINVAL);

  int64_t real_before = vt_real();
  struct timespec ahead = vt_ts(real_before + HOUR);
  SYS(clock_settime(CLOCK_REALTIME, &ahead));
  CHECK(vt_real() - real_before >= HOUR);
  if (vt_virtual()) CHECK_EQ(vt_real() - real_before, HOUR);
  CHECK_EQ(vt_mono() - g_mono0, VT_NS_PER_SEC);

  pid_t child = (pid_t)SYS(fork());
  if (child == 0) {
    /* The child sees the same realtime: exit 0 when it does. */
    _exit(vt_real() - real_before == HOUR ? 0 : 1);
  }
  int status = 0;
  SYS(waitpid(child, &status, 0));
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  /* TFD_TIMER_CANCEL_ON_SET: the set cancels the read. */
  uint64_t n = 0;
  CHECK_EQ(read(cfd, &n, sizeof n), -1);
  CHECK_EQ(errno, ECANCELED);
  CHECK_EQ(read(cfd, &n, sizeof n), -1);  /* once: then it is an armed timer again */
  CHECK_EQ(errno, EAGAIN);

  PT(pthread_join(a, NULL));
  PT(pthread_join(b, NULL));
  CHECK_EQ(g_abs_sleep_end, HOUR);  /* due at real0 + 2 h = one hour after the set */
  CHECK_EQ(g_cond_end, HOUR);
  SYS(read(tfd, &n, sizeof n));     /* due at real0 + 3 h: two monotonic hours after the start */
  CHECK_EQ(n, 1);
  CHECK_EQ(vt_mono() - g_mono0, 2 * HOUR);
  int64_t mono_mid = vt_mono();
  vt_sleep(HOUR);                   /* relative: exactly one monotonic hour */
  CHECK_EQ(vt_mono() - mono_mid, HOUR);

  int64_t r0 = vt_real();
  struct timeval tv = vt_tv(r0 + 10 * VT_NS_PER_SEC);
  SYS(settimeofday(&tv, NULL));
  CHECK_EQ(vt_real() - r0, 10 * VT_NS_PER_SEC);
  struct timex tx;
  memset(&tx, 0, sizeof tx);
  tx.modes = ADJ_SETOFFSET | ADJ_NANO;
  tx.time.tv_sec = -11;
  tx.time.tv_usec = 500000000;  /* -10.5 s */
  CHECK(adjtimex(&tx) >= 0);
  CHECK_EQ(vt_real() - r0, -500 * VT_NS_PER_MS);
  memset(&tx, 0, sizeof tx);
  tx.modes = ADJ_SETOFFSET;
  tx.time.tv_sec = 0;
  tx.time.tv_usec = 500000;     /* +0.5 s */
  CHECK(clock_adjtime(CLOCK_REALTIME, &tx) >= 0);
  CHECK_EQ(vt_real() - r0, 0);
  close(tfd);
  close(cfd);
}

/* ntp_gettime's time is the program's CLOCK_REALTIME, in microseconds unless the clock's status
 * says nanoseconds (STA_NANO: the kernel's default is micro, but whoever last stepped the host's
 * clock with ADJ_NANO leaves it nano: seen on this VM after a VM fork, most likely its init agent
 * stepping the clock; under vtime the synthesised status is micro). A read-only adjtimex tells
 * which, as glibc does not. */
static void ntp_reads(void) {
  struct timex st;
  memset(&st, 0, sizeof st);
  CHECK(adjtimex(&st) >= 0);
  const int64_t unit = (st.status & STA_NANO) ? 1 : 1000;
  int64_t before = vt_real();
  struct ntptimeval ntv;
  memset(&ntv, 0, sizeof ntv);
  CHECK(ntp_gettime(&ntv) >= 0);
  int64_t ntp_ns = (int64_t)ntv.time.tv_sec * VT_NS_PER_SEC + (int64_t)ntv.time.tv_usec * unit;
  int64_t after = vt_real();
  CHECK(ntp_ns >= before - 1000 && ntp_ns <= after);
  if (vt_virtual()) CHECK_EQ(ntp_ns, before / 1000 * 1000);
}

static void unprivileged(void) {
  int64_t real0 = vt_real();
  struct timespec bad = {1, 1000000000L};
  CHECK_EQ(clock_settime(CLOCK_REALTIME, &bad), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(clock_settime(CLOCK_MONOTONIC, &bad), -1);
  CHECK_EQ(errno, EINVAL);
  struct timespec ahead = vt_ts(real0 + HOUR);
  CHECK_EQ(clock_settime(CLOCK_REALTIME, &ahead), -1);
  CHECK_EQ(errno, EPERM);
  struct timeval tv = vt_tv(real0 + HOUR);
  CHECK_EQ(settimeofday(&tv, NULL), -1);
  CHECK_EQ(errno, EPERM);
  struct timex tx;
  memset(&tx, 0, sizeof tx);
  tx.modes = ADJ_SETOFFSET;
  tx.time.tv_sec = 3600;
  CHECK_EQ(adjtimex(&tx), -1);
  CHECK_EQ(errno, EPERM);
  memset(&tx, 0, sizeof tx);  /* read-only: allowed to anyone */
  CHECK(adjtimex(&tx) >= 0);
  int64_t tx_ns = (int64_t)tx.time.tv_sec * VT_NS_PER_SEC +
                  (tx.status & STA_NANO ? tx.time.tv_usec : tx.time.tv_usec * 1000);
  CHECK(tx_ns >= real0 && tx_ns - real0 < 60 * VT_NS_PER_SEC);
  CHECK(vt_real() - real0 < 60 * VT_NS_PER_SEC);
  if (vt_virtual()) CHECK_EQ(vt_real(), real0);
}

int main(void) {
  vt_begin("clock_set");
  if (may_set_time()) {
    if (!vt_virtual()) {
      fprintf(stderr, "FATAL: clock_set refuses to set this machine's clock: run it under vtime\n");
      return 1;
    }
    printf("mode: privileged\n");
    privileged();
  } else {
    printf("mode: unprivileged\n");
    unprivileged();
  }
  ntp_reads();
  return vt_finish();
}
