/* kill_sleeper: killed processes must not leave pending deadlines that stall or distort time.
 * The parent forks three sleepers with very long deadlines (virtual: 1e6 s; natively 30 s):
 *  - one in nanosleep;
 *  - one with two threads, in poll(timeout) and clock_nanosleep(TIMER_ABSTIME);
 *  - one in a long nanosleep ended by SIGTERM (default action) instead of SIGKILL.
 * It sleeps 1 unit, kills them and reaps them (at exactly 1 unit: reaping takes no time), then
 * sleeps 2 more units and finds exactly 3 units elapsed: the dead sleepers' deadlines neither
 * held the clock back nor made it jump. Finally a fresh child sleeping 1 unit behaves normally.
 */
#include "check.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

static int64_t g_long;

static void* abs_sleeper(void* p) {
  (void)p;
  const struct timespec until = vt_ts(vt_mono() + g_long);
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
  return NULL;
}

static pid_t spawn_sleeper(int kind) {
  const pid_t pid = (pid_t)SYS(fork());
  if (pid != 0) return pid;
  if (kind == 1) {
    pthread_t t;
    if (pthread_create(&t, NULL, abs_sleeper, NULL) != 0) _exit(3);
    poll(NULL, 0, (int)(g_long / VT_NS_PER_MS));
  } else {
    const struct timespec req = vt_ts(g_long);
    nanosleep(&req, NULL);
  }
  _exit(2); /* reached only if the long sleep ended: the parent will report it */
}

static void reap(pid_t pid, int sig) {
  int status = 0;
  CHECK_EQ(SYS(waitpid(pid, &status, 0)), pid);
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK_EQ(WTERMSIG(status), sig);
}

int main(void) {
  vt_begin("kill_sleeper");
  const int64_t unit = vt_unit(100 * VT_NS_PER_MS);
  g_long = vt_virtual() ? 1000000 * VT_NS_PER_SEC : 30 * VT_NS_PER_SEC;

  const int64_t t0 = vt_mono();
  const pid_t a = spawn_sleeper(0);
  const pid_t b = spawn_sleeper(1);
  const pid_t c = spawn_sleeper(2);
  vt_sleep(unit);
  SYS(kill(a, SIGKILL));
  SYS(kill(b, SIGKILL));
  SYS(kill(c, SIGTERM));
  reap(a, SIGKILL);
  reap(b, SIGKILL);
  reap(c, SIGTERM);
  const int64_t t1 = vt_mono();
  vt_sleep(2 * unit);
  const int64_t t2 = vt_mono();
  printf("  killed and reaped at +%lld ns, slept 2 more units to +%lld ns\n",
         (long long)(t1 - t0), (long long)(t2 - t0));
  CHECK_ELAPSED(t1 - t0, unit);
  CHECK_ELAPSED(t2 - t0, 3 * unit);

  /* A new child after the killings: its sleep ends at its own deadline. */
  const int64_t t3 = vt_mono();
  const pid_t d = (pid_t)SYS(fork());
  if (d == 0) {
    vt_sleep(unit);
    _exit(0);
  }
  int status = 0;
  CHECK_EQ(SYS(waitpid(d, &status, 0)), d);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_ELAPSED(vt_mono() - t3, unit);
  return vt_finish();
}
