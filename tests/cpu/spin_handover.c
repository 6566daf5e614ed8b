/* spin_handover: a busy-wait on the clock that hands a baton to another thread at every 5 ms of
 * the clock and waits, with a timed wait, until it comes back: CPython's loop spinning while
 * another thread takes the GIL every switch interval (its test_asyncio.test_base_events). The
 * other thread gives the baton back at once, so each of those waits ends at the instant it began.
 *
 * Phase 1 spins 100 ms that way; phase 2 sleeps 1 ms (a wait for time) and spins 10 ms more.
 * Prints the clock reads each phase took and the time each saw. Under `--cpu-model calls` the
 * reads are a function of the burst and the cost only: phase 1 makes one burst's worth free and
 * then pays every read (the hand-overs do not start a new burst), phase 2 a new burst (its sleep
 * waited for time) and 10 ms worth of paid reads. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int baton;  /* 1: the helper holds it; 0: the spinner */
static int done;

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void* helper(void* arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (!baton && !done) pthread_cond_wait(&cv, &mu);
    if (done) break;
    baton = 0;
    pthread_cond_broadcast(&cv);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* Hands the baton over and waits for it with a deadline a second away (never reached). */
static void hand_over(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 1;
  pthread_mutex_lock(&mu);
  baton = 1;
  pthread_cond_broadcast(&cv);
  while (baton) pthread_cond_timedwait(&cv, &mu, &until);
  pthread_mutex_unlock(&mu);
}

static long spin(long long span_ns, int hand_overs, long long* seen) {
  long long start = now_ns(), next = start + 5000000LL, t;
  long reads = 0;
  do {
    t = now_ns();
    ++reads;
    if (hand_overs && t >= next) {
      hand_over();
      next += 5000000LL;
    }
  } while (t - start < span_ns);
  *seen = t - start;
  return reads;
}

int main(void) {
  pthread_t h;
  if (pthread_create(&h, NULL, helper, NULL) != 0) return 1;
  long long seen1, seen2;
  long reads1 = spin(100000000LL, 1, &seen1);
  struct timespec ms = {0, 1000000};
  nanosleep(&ms, NULL);
  long reads2 = spin(10000000LL, 0, &seen2);
  pthread_mutex_lock(&mu);
  done = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(h, NULL);
  printf("phase 1: %ld reads, %lld ns\nphase 2: %ld reads, %lld ns\n", reads1, seen1, reads2, seen2);
  return 0;
}
