// Real computation for the serial-gate test programs: `ms` milliseconds of this thread's CPU
// time, during which no virtual time passes (the gate's decisions are what the tests watch).
#pragma once

#include <time.h>

static inline void compute_ms(long ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}
