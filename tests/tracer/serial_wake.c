// The serial gate's thread turns and a wait that another thread of its process ends during an
// advance's step, in a static program. Thread P (made first) waits in an epoll wait on a pipe
// (timed, 10 s; with an argument, untimed); thread W sleeps 1 s, then writes to the pipe,
// computes 50 ms and prints "W". The advance to 1 s releases W's sleep; P's wait ends at W's
// write, while W runs. Held for its turn, P prints once W is idle: "W" then "P". Run beside W
// (the gate's behaviour for fd waits before, and Go's network poller woken by a thread back from
// a charged call), P printed first.
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "compute_ms.h"

static int fds[2];
static int timeout_ms = 10000;

static void* poller(void* arg) {
  (void)arg;
  int ep = epoll_create1(0);
  struct epoll_event e = {.events = EPOLLIN, .data.u32 = 'p'};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &e) != 0) return "epoll";
  struct epoll_event got[2];
  if (epoll_wait(ep, got, 2, timeout_ms) != 1) return "epoll_wait";
  if (write(1, "P\n", 2) != 2) return "write";
  return NULL;
}

static void* waker(void* arg) {
  (void)arg;
  struct timespec one = {1, 0};
  nanosleep(&one, NULL);
  if (write(fds[1], "x", 1) != 1) return "pipe";
  compute_ms(50);
  if (write(1, "W\n", 2) != 2) return "write";
  return NULL;
}

int main(int argc, char** argv) {
  (void)argv;
  if (argc > 1) timeout_ms = -1;
  if (pipe(fds) != 0) return 1;
  pthread_t p, w;
  void* rp = NULL;
  void* rw = NULL;
  if (pthread_create(&p, NULL, poller, NULL) != 0 || pthread_create(&w, NULL, waker, NULL) != 0) return 1;
  pthread_join(p, &rp);
  pthread_join(w, &rw);
  if (rp || rw) fprintf(stderr, "failed: %s\n", rp ? (const char*)rp : (const char*)rw);
  return rp || rw ? 1 : 0;
}
