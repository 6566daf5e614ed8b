// The serial gate and an epoll wait's result (vtime exec --serialize), in a static program. A
// child waits in a timed epoll_wait on two sockets. At 1 s the parent writes to the first, then
// computes, then writes to the second: the child's wait ends at the first write, while the
// parent has the tree, and is held. What the kernel handed it then (one event) depended on how
// far the parent had got in real time; at the release the tracer looks again without blocking
// (the parent has written both by then), so the child gets both events, in the order they came:
// "events 2: a b". Without the look it printed "events 1: a". With an argument the child waits
// without a timeout (an untimed epoll wait, which the gate stops too). Also built dynamically
// (dynamic_serial_topup): the shim holds and looks again itself.
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compute_ms.h"

int main(int argc, char** argv) {
  (void)argv;
  int a[2], b[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, b) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    int ep = epoll_create1(0);
    struct epoll_event ea = {.events = EPOLLIN, .data.u32 = 'a'};
    struct epoll_event eb = {.events = EPOLLIN, .data.u32 = 'b'};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, a[1], &ea) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, b[1], &eb) != 0) _exit(1);
    struct epoll_event ev[4];
    int n = epoll_wait(ep, ev, 4, argc > 1 ? -1 : 5000);
    char line[64];
    int len = snprintf(line, sizeof line, "events %d:", n);
    for (int i = 0; i < n; ++i) len += snprintf(line + len, sizeof line - (size_t)len, " %c", (char)ev[i].data.u32);
    line[len++] = '\n';
    _exit(write(1, line, (size_t)len) == len ? 0 : 1);
  }
  struct timespec one = {1, 0};
  nanosleep(&one, NULL);
  if (write(a[0], "x", 1) != 1) return 1;
  compute_ms(100);
  if (write(b[0], "x", 1) != 1) return 1;
  int st = 0;
  if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
  return 0;
}
