/* sanitizer_yields: a program built with AddressSanitizer that runs LeakSanitizer's check N
 * times, then yields 20,000 times itself, and prints the virtual time each part took. Each
 * leak check stops the world: the calling thread spins on sched_yield until LeakSanitizer's
 * tracer thread has scanned the heap, a real-time wait of a few hundred to thousands of yields.
 * Under `--cpu-model calls` the sanitizer's yields must cost nothing (they are not the
 * program's; charged, the first part took 114-295 ms in four runs); the program's own yields
 * still cost, the same every run. */
#include <sanitizer/lsan_interface.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  int checks = argc > 1 ? atoi(argv[1]) : 1000;
  long long t0 = now_ns();
  for (int i = 0; i < checks; ++i) __lsan_do_recoverable_leak_check();
  long long t1 = now_ns();
  for (int i = 0; i < 20000; ++i) sched_yield();
  long long t2 = now_ns();
  printf("leak checks: %d in %lld ns\nown yields: 20000 in %lld ns\n", checks, t1 - t0, t2 - t1);
  return 0;
}
