/* fork_exec: the clock across processes.
 *  1. fork: the child sleeps 2 units and exits; the parent sleeps 1 unit, sees the child still
 *     running (waitpid WNOHANG), then waits for it. The child's clock readings, passed back
 *     through a pipe, match the parent's exactly under virtual time (one clock per session):
 *     it starts at the parent's t0 and wakes at t0 + 2 units, which is also when waitpid
 *     returns.
 *  2. fork + execv("/bin/sleep"), vfork + execv("/bin/sleep"), posix_spawn("/bin/sleep"): the
 *     parent's waitpid returns after exactly the duration given (exec keeps the session).
 *  3. posix_spawn("/bin/date", "+%s") with stdout on a pipe: its output equals the parent's
 *     time(NULL) (virtual: read before and after, all three equal; native: in between).
 */
#include "check.h"

#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

static int64_t g_unit;

struct child_report {
  int64_t start_mono, wake_mono, wake_real;
};

static void fork_and_sleep(void) {
  int fds[2];
  SYS(pipe(fds));
  const int64_t t0 = vt_mono();
  const int64_t r0 = vt_real();
  const pid_t pid = (pid_t)SYS(fork());
  if (pid == 0) {
    struct child_report rep;
    rep.start_mono = vt_mono();
    vt_sleep(2 * g_unit);
    rep.wake_mono = vt_mono();
    rep.wake_real = vt_real();
    if (write(fds[1], &rep, sizeof rep) != (ssize_t)sizeof rep) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  vt_sleep(g_unit);
  const int64_t t1 = vt_mono();
  int status = 0;
  CHECK_EQ(SYS(waitpid(pid, &status, WNOHANG)), 0); /* still sleeping */
  CHECK_EQ(SYS(waitpid(pid, &status, 0)), pid);
  const int64_t t2 = vt_mono();
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  struct child_report rep;
  CHECK_EQ(SYS(read(fds[0], &rep, sizeof rep)), (long)sizeof rep);
  close(fds[0]);
  printf("  fork: child started at +%lld ns, woke at +%lld ns; parent checked at +%lld ns, "
         "reaped at +%lld ns\n",
         (long long)(rep.start_mono - t0), (long long)(rep.wake_mono - t0), (long long)(t1 - t0),
         (long long)(t2 - t0));
  CHECK_ELAPSED(rep.start_mono - t0, 0);
  CHECK_ELAPSED(rep.wake_mono - t0, 2 * g_unit);
  CHECK_ELAPSED(rep.wake_real - r0, 2 * g_unit);
  CHECK_ELAPSED(t1 - t0, g_unit);
  CHECK_ELAPSED(t2 - t0, 2 * g_unit);
  CHECK(t2 >= rep.wake_mono);
}

enum method { kForkExec, kVforkExec, kSpawn };

static void exec_sleep(enum method m, const char* name) {
  const int64_t d = 2 * g_unit;
  char arg[64];
  snprintf(arg, sizeof arg, "%lld.%09lld", (long long)(d / VT_NS_PER_SEC),
           (long long)(d % VT_NS_PER_SEC));
  char* const argv[] = {(char*)"sleep", arg, NULL};
  const int64_t t0 = vt_mono();
  pid_t pid = 0;
  switch (m) {
    case kForkExec:
      pid = (pid_t)SYS(fork());
      if (pid == 0) {
        execv("/bin/sleep", argv);
        _exit(127);
      }
      break;
    case kVforkExec:
      pid = (pid_t)SYS(vfork());
      if (pid == 0) {
        execv("/bin/sleep", argv);
        _exit(127);
      }
      break;
    case kSpawn:
      PT(posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, environ));
      break;
  }
  int status = 0;
  CHECK_EQ(SYS(waitpid(pid, &status, 0)), pid);
  const int64_t elapsed = vt_mono() - t0;
  printf("  %s /bin/sleep %s: %lld ns\n", name, arg, (long long)elapsed);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_ELAPSED(elapsed, d);
}

static void spawn_date(void) {
  int fds[2];
  SYS(pipe(fds));
  posix_spawn_file_actions_t fa;
  PT(posix_spawn_file_actions_init(&fa));
  PT(posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO));
  PT(posix_spawn_file_actions_addclose(&fa, fds[0]));
  PT(posix_spawn_file_actions_addclose(&fa, fds[1]));
  char* const argv[] = {(char*)"date", (char*)"+%s", NULL};
  const time_t before = time(NULL);
  pid_t pid;
  PT(posix_spawn(&pid, "/bin/date", &fa, NULL, argv, environ));
  close(fds[1]);
  char out[64] = {0};
  size_t len = 0;
  ssize_t n;
  while (len < sizeof out - 1 && (n = read(fds[0], out + len, sizeof out - 1 - len)) > 0) {
    len += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  CHECK_EQ(SYS(waitpid(pid, &status, 0)), pid);
  const time_t after = time(NULL);
  PT(posix_spawn_file_actions_destroy(&fa));
  const long long printed = strtoll(out, NULL, 10);
  printf("  posix_spawn /bin/date +%%s: %lld (parent's time(): %lld before, %lld after)\n",
         printed, (long long)before, (long long)after);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (vt_virtual()) {
    CHECK_EQ(printed, before);
    CHECK_EQ(after, before);
  } else {
    /* time() reads the coarse clock, which may lag date's clock_gettime by one tick. */
    CHECK(printed >= before && printed <= after + 1);
  }
}

int main(void) {
  vt_begin("fork_exec");
  g_unit = vt_unit(100 * VT_NS_PER_MS);
  fork_and_sleep();
  exec_sleep(kForkExec, "fork + execv");
  exec_sleep(kVforkExec, "vfork + execv");
  exec_sleep(kSpawn, "posix_spawn");
  spawn_date();
  return vt_finish();
}
