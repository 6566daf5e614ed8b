// Helpers of the serial-gate test programs. compute_ms: `ms` milliseconds of this thread's CPU
// time, during which no virtual time passes (the gate's decisions are what the tests watch).
#pragma once

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline void compute_ms(long ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

// The end of a thread-turns test's waiter: thread "A" computes 50 ms, then each prints its name,
// so that threads released together print "B" first. NULL, or what failed.
static inline void* print_in_turn(const char* name) {
  if (name[0] == 'A') compute_ms(50);
  char line[8];
  int len = snprintf(line, sizeof line, "%s\n", name);
  if (write(1, line, (size_t)len) != len) return "write";
  return NULL;
}
