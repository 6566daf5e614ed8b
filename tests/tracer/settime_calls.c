/* A C program that sets the clock with system calls (clock_settime, settimeofday, adjtimex,
 * clock_adjtime) through syscall(2), and once with an inline `syscall` instruction. Built twice:
 * static (static_settime: every call is raw, the tracer emulates them on the session's virtual
 * clock) and dynamic (dynamic_settime: the shim's syscall(2) does; the inline instruction meets
 * the clock guard, a seccomp filter given to processes that may set the time: ENOSYS, since no
 * tracer emulates it). It prints each call's result and how far the realtime and monotonic clocks
 * moved, in virtual seconds (exact under vtime), what a forked child sees, and when a thread's
 * absolute CLOCK_REALTIME sleep to the start + 2 h ends (it moves with the sets). With CAP_SYS_TIME:
 * realtime +1 h, -10 s, +10.5 s, -0.5 s, monotonic unmoved; without: EPERM from each setting call
 * (EINVAL first for a clock that cannot be set).
 *
 * Never run it natively with CAP_SYS_TIME: it would set this machine's clock. The tests run it
 * as root only inside a user namespace (`unshare --user --map-root-user`), where the kernel
 * refuses any set of the real clock: a regression fails there instead of moving the clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t ns_of(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t g_real, g_mono;
static int64_t g_start_real, g_start_mono, g_sleep_end_mono;

static void* abs_sleeper(void* arg) {
  (void)arg;
  int64_t until = g_start_real + 7200 * (int64_t)1000000000;
  struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
  g_sleep_end_mono = ns_of(CLOCK_MONOTONIC);
  return NULL;
}

/* clock_settime(2) as an inline system call instruction, out of every interposer's reach. */
static long inline_clock_settime(clockid_t clk, const struct timespec* ts) {
  long r;
  __asm__ __volatile__("syscall" : "=a"(r) : "0"((long)SYS_clock_settime), "D"((long)clk), "S"(ts) : "rcx", "r11", "memory");
  if (r < 0) {
    errno = (int)-r;
    return -1;
  }
  return r;
}

static void report(const char* what, long r) {
  int64_t real = ns_of(CLOCK_REALTIME), mono = ns_of(CLOCK_MONOTONIC);
  printf("%-26s -> %ld (%s): realtime %+.9f s, monotonic %+.9f s\n", what, r, r < 0 ? strerror(errno) : "ok",
         (double)(real - g_real) / 1e9, (double)(mono - g_mono) / 1e9);
  g_real = real;
  g_mono = mono;
}

int main(void) {
  g_real = g_start_real = ns_of(CLOCK_REALTIME);
  g_mono = g_start_mono = ns_of(CLOCK_MONOTONIC);
  pthread_t sleeper;
  pthread_create(&sleeper, NULL, abs_sleeper, NULL);
  struct timespec bad = {1, 0};
  report("clock_settime(MONOTONIC)", syscall(SYS_clock_settime, CLOCK_MONOTONIC, &bad));
  struct timespec ahead = {(time_t)(g_real / 1000000000) + 3600, (long)(g_real % 1000000000)};
  report("clock_settime(+1 h)", syscall(SYS_clock_settime, CLOCK_REALTIME, &ahead));
  int64_t back = ns_of(CLOCK_REALTIME) - 10 * (int64_t)1000000000;
  struct timeval tv = {(time_t)(back / 1000000000), (long)(back % 1000000000) / 1000};
  report("settimeofday(-10 s)", syscall(SYS_settimeofday, &tv, NULL));
  struct timex tx;
  memset(&tx, 0, sizeof tx);
  tx.modes = ADJ_SETOFFSET | ADJ_NANO;
  tx.time.tv_sec = 10;
  tx.time.tv_usec = 500000000; /* +10.5 s */
  report("adjtimex(+10.5 s)", syscall(SYS_adjtimex, &tx));
  memset(&tx, 0, sizeof tx);
  tx.modes = ADJ_SETOFFSET;
  tx.time.tv_sec = -1;
  tx.time.tv_usec = 500000; /* -0.5 s */
  report("clock_adjtime(-0.5 s)", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
  int64_t plus = ns_of(CLOCK_REALTIME) + 1000000000;
  struct timespec plus_ts = {(time_t)(plus / 1000000000), (long)(plus % 1000000000)};
  report("inline clock_settime(+1 s)", inline_clock_settime(CLOCK_REALTIME, &plus_ts));
  memset(&tx, 0, sizeof tx);
  long r = syscall(SYS_adjtimex, &tx); /* read-only: anyone may */
  int64_t tx_ns = (int64_t)tx.time.tv_sec * 1000000000 + (tx.status & STA_NANO ? tx.time.tv_usec : tx.time.tv_usec * 1000);
  int64_t now = ns_of(CLOCK_REALTIME);
  printf("adjtimex(read) -> %ld: %s\n", r, tx_ns <= now && now - tx_ns < 1000000 ? "the clock read" : "another clock");
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    printf("a child's realtime %s\n", ns_of(CLOCK_REALTIME) - now < 1000000 ? "agrees" : "differs");
    fflush(stdout);
    _exit(0);
  }
  waitpid(child, NULL, 0);
  pthread_join(sleeper, NULL);
  printf("an absolute realtime sleep to the start + 2 h ended at monotonic %+.9f s\n",
         (double)(g_sleep_end_mono - g_start_mono) / 1e9);
  return 0;
}
