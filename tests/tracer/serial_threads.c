// The serial gate's thread turns (vtime exec --serialize), in a static program: two threads of
// one process woken at one virtual instant run one after another, in the order the process
// made them. A child process makes thread A, then thread B; each waits in a timed poll on its
// own pipe. At 1 s the parent writes to B's pipe, then to A's, and computes for a while: both
// waits end while the parent has the tree, so the gate holds both threads. Once the parent is
// idle (in waitpid), A's turn comes first: it computes 50 ms, then prints; B prints as soon as
// it runs. With thread turns the output is "A" then "B"; threads released together (the gate's
// behaviour before turns) print "B" first, A still computing.
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compute_ms.h"

static int pipe_a[2], pipe_b[2];

static void* waiter(void* arg) {
  const char* name = arg;
  int fd = name[0] == 'A' ? pipe_a[0] : pipe_b[0];
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1) return "poll";
  return print_in_turn(name);
}

int main(void) {
  if (pipe(pipe_a) != 0 || pipe(pipe_b) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    pthread_t a, b;
    void* ra = NULL;
    void* rb = NULL;
    if (pthread_create(&a, NULL, waiter, "A") != 0 || pthread_create(&b, NULL, waiter, "B") != 0) _exit(1);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    _exit(ra || rb ? 1 : 0);
  }
  struct timespec one = {1, 0};
  nanosleep(&one, NULL);
  if (write(pipe_b[1], "x", 1) != 1 || write(pipe_a[1], "x", 1) != 1) return 1;
  compute_ms(100);
  int st = 0;
  if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
  return 0;
}
