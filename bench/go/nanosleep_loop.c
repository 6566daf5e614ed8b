/* N nanosleep(1 µs) calls from a static C program (bench/tracer.sh): one seccomp stop and one
 * wake-up by the controller per sleep under vtime (a direct sleep), the mechanism's own cost. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  struct timespec d = {0, 1000};
  for (long i = 0; i < n; ++i) nanosleep(&d, NULL);
  return 0;
}
