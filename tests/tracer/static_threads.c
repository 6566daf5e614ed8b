// Four threads of a static program sleeping at once (tests/tracer/tracer_cases.py, static_c): three
// with relative nanosleep of (k + 1) * 100 ms + i us, one with absolute clock_nanosleep a second
// apart; each prints the virtual instant it woke at. Several sleeps are pending at once, from one
// process: one listener holds several notifications (docs/tracer.md "Notified sleeps").
// With "exec N", it sleeps N * 250 ms, prints the virtual wall clock and executes itself with
// N + 1, up to 3: each image's sleep is read from a new address space (the controller keeps the
// old one's /proc/PID/mem open, which then reads nothing).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>
static int64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static int64_t t0;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void* run(void* arg) {
  long k = (long)arg;
  for (int i = 0; i < 5; ++i) {
    struct timespec d = {0, (k + 1) * 100000000L + i * 1000};
    if (k == 2) { struct timespec a; clock_gettime(CLOCK_MONOTONIC, &a); a.tv_sec += 1; clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &a, 0); }
    else nanosleep(&d, 0);
    pthread_mutex_lock(&mu);
    printf("thread %ld round %d at %.9f\n", k, i, (now_ns() - t0) / 1e9);
    pthread_mutex_unlock(&mu);
  }
  return 0;
}
static int exec_chain(int n) {
  struct timespec d = {0, n * 250000000L}, w;
  nanosleep(&d, 0);
  clock_gettime(CLOCK_REALTIME, &w);
  printf("image %d at %lld.%09ld\n", n, (long long)w.tv_sec, w.tv_nsec);
  fflush(stdout);
  if (n == 3) return 0;
  char next[16];
  snprintf(next, sizeof next, "%d", n + 1);
  execl("/proc/self/exe", "static_threads", "exec", next, (char*)0);
  perror("execl");
  return 1;
}
int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "exec") == 0) return exec_chain(atoi(argv[2]));
  t0 = now_ns();
  pthread_t th[4];
  for (long k = 0; k < 4; ++k) pthread_create(&th[k], 0, run, (void*)k);
  for (int k = 0; k < 4; ++k) pthread_join(th[k], 0);
  return 0;
}
