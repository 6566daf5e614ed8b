/* A program of a user's own, as written: it sleeps N seconds and prints how long its monotonic
 * clock says it slept. The install tests rewrite it with the installed `vtime rewrite`, build it
 * statically against the installed libvtime and run it under the installed `vtime exec`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  sleep(seconds);
  clock_gettime(CLOCK_MONOTONIC, &b);
  long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
  printf("slept_ns=%lld\n", ns);
  return 0;
}
