// The serial gate's thread turns, in a static program: two threads of one process whose timed
// waits end at the same virtual instant run one after another, the one whose wait began first
// going first (not the first made). Thread A (made first) sleeps 0.5 s, then until 1 s; thread B
// sleeps until 1 s at once, so its wait began first. B computes 50 ms, then prints its name; A
// prints as soon as it runs. With one wait per step the output is "B" then "A"; threads woken
// together (the gate's behaviour before, still the rule without the gate) print "A" first, B
// still computing; an order by thread (A made first) would print "A" first too.
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "compute_ms.h"

static struct timespec start;

static void* sleeper(void* arg) {
  const char* name = arg;
  struct timespec at = start;
  if (name[0] == 'A') {
    struct timespec half = {0, 500000000};
    nanosleep(&half, NULL);
  }
  at.tv_sec += 1;
  if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) return "clock_nanosleep";
  if (name[0] == 'B') compute_ms(50);
  char line[8];
  int len = snprintf(line, sizeof line, "%s\n", name);
  if (write(1, line, (size_t)len) != len) return "write";
  return NULL;
}

int main(void) {
  clock_gettime(CLOCK_MONOTONIC, &start);
  pthread_t a, b;
  void* ra = NULL;
  void* rb = NULL;
  if (pthread_create(&a, NULL, sleeper, "A") != 0 || pthread_create(&b, NULL, sleeper, "B") != 0) return 1;
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  return ra || rb ? 1 : 0;
}
