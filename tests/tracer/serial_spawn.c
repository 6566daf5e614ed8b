// A static C program that starts children the way glibc does it without fork: system() and
// posix_spawn(), both a clone with CLONE_VM | CLONE_VFORK (clone3 where the kernel has it), whose
// parent then waits, uninterruptibly, until the child executes. Under thread turns
// (--serialize-threads) such a child must not be held for its turn: holding it until the tree is
// idle never ended (tracer_cases.py serial_spawn).
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char** environ;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void) {
  double start = now();
  int rc = system("sleep 0.5");
  printf("system: %d at %.6f\n", rc, now() - start);
  pid_t pid;
  char* argv[] = {"sleep", "0.25", NULL};
  rc = posix_spawnp(&pid, "sleep", NULL, NULL, argv, environ);
  if (rc != 0 || waitpid(pid, &rc, 0) != pid) {
    printf("posix_spawnp failed\n");
    return 1;
  }
  printf("posix_spawn: %d at %.6f\n", rc, now() - start);
  return 0;
}
