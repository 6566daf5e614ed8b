// Thread turns over futex waits (vtime exec --serialize-threads), in a static program: threads of
// one process woken together by another of its threads run one after another, in the order the
// process made them. Threads A and B wait on a futex word (raw FUTEX_WAIT, no timeout); at 1 s
// the main thread wakes both and joins them. A computes 50 ms, then prints; B prints as soon as
// it runs. With thread turns: "A" then "B". Released together (the kernel wakes both; processes
// alone serialised, or no gate) B prints first, A still computing.
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compute_ms.h"

static _Atomic int go_word = 0;

static void* waiter(void* arg) {
  const char* name = arg;
  while (atomic_load(&go_word) == 0) syscall(SYS_futex, &go_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  return print_in_turn(name);
}

int main(void) {
  pthread_t a, b;
  if (pthread_create(&a, NULL, waiter, "A") != 0 || pthread_create(&b, NULL, waiter, "B") != 0) return 1;
  struct timespec one = {1, 0};
  nanosleep(&one, NULL);
  atomic_store(&go_word, 1);
  syscall(SYS_futex, &go_word, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0);
  void* ra = NULL;
  void* rb = NULL;
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  return ra || rb ? 1 : 0;
}
