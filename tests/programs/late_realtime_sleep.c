/* late_realtime_sleep: an absolute CLOCK_REALTIME clock_nanosleep due 10 s ahead, while another
 * thread sets CLOCK_REALTIME 5 s forward at 1 s; prints how long it slept on CLOCK_MONOTONIC.
 * Under vtime with a sleep latency (`vtime exec`'s default 50 us) the set re-evaluates the sleep,
 * which ends at 5 s plus the latency: "slept 5.000050 s". Before session 37 a late sleep lost its
 * realtime mark (the latency was added before the mark was matched) and slept the full 10 s.
 * Needs CAP_SYS_TIME: run it as root only under vtime inside no_clock_set (see clock_set.c);
 * without it, exit 77 (skipped). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int g_set_errno;

static void* set_forward(void* arg) {
  (void)arg;
  sleep(1);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += 5;
  if (clock_settime(CLOCK_REALTIME, &t) != 0) g_set_errno = errno;
  return NULL;
}

int main(void) {
  struct timespec m0, m1, due;
  clock_gettime(CLOCK_MONOTONIC, &m0);
  clock_gettime(CLOCK_REALTIME, &due);
  due.tv_sec += 10;
  pthread_t setter;
  pthread_create(&setter, NULL, set_forward, NULL);
  clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &due, NULL);
  clock_gettime(CLOCK_MONOTONIC, &m1);
  pthread_join(setter, NULL);
  if (g_set_errno == EPERM) {
    puts("no CAP_SYS_TIME: skipped");
    return 77;
  }
  if (g_set_errno != 0) {
    printf("clock_settime: errno %d\n", g_set_errno);
    return 1;
  }
  printf("slept %.6f s\n", (double)(m1.tv_sec - m0.tv_sec) + (double)(m1.tv_nsec - m0.tv_nsec) / 1e9);
  return 0;
}
