// The serial gate (vtime exec --serialize), in a static program: three processes at one virtual
// instant. At 1 s the parent writes "1" to the second child's pipe, computes for a while (no
// virtual time passes), writes "2" to that pipe and "x" to the first child's. Each child waits
// in a timed poll, then reads whatever its pipe holds and prints it with its pid.
//
// Under the gate no child runs before the parent is idle (in waitpid): the second child reads
// "12" in one read, and the children print in start order (the first forked first, whatever
// their pids). Without it the second child usually wakes during the computation and reads "1".
// The optional second argument forks that many short-lived processes between the two children,
// so that a test can make the pids wrap around between them.
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double start;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - start;
}

static void child(const char* name, int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  int n = poll(&p, 1, 5000);
  char buf[16] = {0};
  ssize_t got = n > 0 ? read(fd, buf, sizeof buf - 1) : 0;
  char line[96];
  int len = snprintf(line, sizeof line, "%s pid %d read '%s' at %.3f\n", name, (int)getpid(), got > 0 ? buf : "",
                     now());
  if (write(1, line, (size_t)len) != len) _exit(1);
  _exit(0);
}

int main(int argc, char** argv) {
  long spin = argc > 1 ? atol(argv[1]) : 200;  // milliseconds of real computation between writes
  long spacers = argc > 2 ? atol(argv[2]) : 0;
  int first[2], second[2];
  start = now();
  if (pipe(first) != 0 || pipe(second) != 0) return 1;
  pid_t a = fork();
  if (a == 0) child("first", first[0]);
  for (long i = 0; i < spacers; ++i) {
    pid_t s = fork();
    if (s == 0) _exit(0);
    if (s < 0 || waitpid(s, NULL, 0) != s) return 1;
  }
  pid_t b = fork();
  if (b == 0) child("second", second[0]);
  struct timespec one = {1, 0};
  nanosleep(&one, NULL);
  if (write(second[1], "1", 1) != 1) return 1;
  struct timespec t0, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  do {
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < spin);
  if (write(second[1], "2", 1) != 1 || write(first[1], "x", 1) != 1) return 1;
  int st;
  waitpid(a, &st, 0);
  waitpid(b, &st, 0);
  printf("parent done at %.3f\n", now());
  return 0;
}
