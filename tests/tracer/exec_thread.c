/* A static program whose main thread sleeps 100 s while, 1 s in, another thread executes the
 * program again (static too: no shim comes to clean up), which then waits for ever on its
 * standard input (a pipe whose only writer is itself). The exec ends the main thread and its
 * sleep: vtime must find the tree blocked for ever at virtual 1 s, not first advance the clock to
 * the dead sleep's 100 s (tracer.exec_thread). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void* run_cat(void* arg) {
  (void)arg;
  struct timespec one = {1, 0};
  nanosleep(&one, NULL); /* the main thread is asleep by then */
  int fds[2];
  if (pipe(fds) != 0 || dup2(fds[0], 0) < 0) return NULL;
  execl("/proc/self/exe", "exec_thread", "block", (char*)NULL);
  perror("execl");
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "block") == 0) {
    char c;
    return read(0, &c, 1) == 1 ? 0 : 2;
  }
  pthread_t t;
  pthread_create(&t, NULL, run_cat, NULL);
  struct timespec hundred = {100, 0};
  nanosleep(&hundred, NULL);
  printf("the sleep ended: the exec did not happen\n");
  return 1;
}
