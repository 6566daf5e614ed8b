/* spin_clock: a busy-wait on the clock, the simplest program that waits by running: reads
 * CLOCK_MONOTONIC in a loop until 100 ms have passed, then prints what it saw. Under vtime it
 * finishes only if computation costs virtual time (--cpu-model calls, real). */
#include <stdio.h>
#include <time.h>

int main(void) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  long n = 0;
  long long elapsed;
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
    ++n;
    elapsed = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
  } while (elapsed < 100000000LL);
  printf("elapsed %lld ns after %ld reads\n", elapsed, n);
  return 0;
}
