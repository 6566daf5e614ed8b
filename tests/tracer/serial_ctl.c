// The serial gate's thread turns and a descriptor added ready to an epoll set while another
// thread of the process waits on it, in a static program. Thread P waits in an epoll wait on an
// empty set (timed, 10 s; with an argument, untimed). The main thread sleeps 1 s, adds an eventfd
// that is ready (in and out) to P's set, which wakes P in the kernel, then at once removes and
// closes it, computes 50 ms and prints "W". Whether P found the event depended on whether it ran
// before the removal (Go's net.Listen does the same with a /proc/sys file: two runs of
// kube-scheduler parted there). The adding thread now waits at its epoll_ctl's exit until P has
// taken its events: P returns the one event, held for its turn: "W" then "P 1", every run.
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "compute_ms.h"

static int ep;
static int timeout_ms = 10000;

static void* poller(void* arg) {
  (void)arg;
  // The lowest priority: on the main thread's cpu (the test pins both), woken, it does not take
  // the cpu from the main thread, which would remove the descriptor first.
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
  struct epoll_event got[2];
  int n = epoll_wait(ep, got, 2, timeout_ms);
  if (n < 0) return "epoll_wait";
  char line[16];
  int len = snprintf(line, sizeof line, "P %d\n", n);
  if (write(1, line, (size_t)len) != len) return "write";
  return NULL;
}

int main(int argc, char** argv) {
  (void)argv;
  if (argc > 1) timeout_ms = -1;
  ep = epoll_create1(0);
  if (ep < 0) return 1;
  pthread_t p;
  if (pthread_create(&p, NULL, poller, NULL) != 0) return 1;
  struct timespec one = {1, 0};
  nanosleep(&one, NULL);
  int fd = eventfd(1, 0);  // readable and writable: ready as it is added
  struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.u32 = 'e'};
  if (fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0) return 1;
  if (epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) != 0) return 1;
  close(fd);
  compute_ms(50);
  if (write(1, "W\n", 2) != 2) return 1;
  void* rp = NULL;
  pthread_join(p, &rp);
  if (rp) fprintf(stderr, "failed: %s\n", (const char*)rp);
  return rp ? 1 : 0;
}
