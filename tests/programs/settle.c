/* vtime_settle(): returns once every other thread of the tree is idle, at the same virtual
 * instant. A worker thread is woken through a pipe and computes for a while (real time) before it
 * records that it is done and blocks again; after vtime_settle() the main thread must see the
 * work done, and the clock unchanged. Natively there is no vtime_settle: the program then only
 * checks that the worker's rounds complete (waiting for them), which keeps the test honest. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int fds[2];
static atomic_int done_rounds;

static void* worker(void* arg) {
  (void)arg;
  char c;
  while (read(fds[0], &c, 1) == 1) {
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 20000000UL; ++i) x += i;  /* tens of ms of real computing */
    atomic_fetch_add(&done_rounds, 1);
  }
  return NULL;
}

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void) {
  vt_begin("settle");
  int (*settle)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "vtime_settle");
  CHECK(vt_virtual() ? settle != NULL : settle == NULL);
  CHECK(pipe(fds) == 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
  for (int round = 1; round <= 5; ++round) {
    long long before = now_ns();
    CHECK(write(fds[1], "x", 1) == 1);
    if (vt_virtual()) {
      CHECK(settle() == 0);
      CHECK(atomic_load(&done_rounds) == round);
      CHECK(now_ns() == before);
    } else {
      while (atomic_load(&done_rounds) < round) usleep(1000);
    }
  }
  close(fds[1]);
  CHECK(pthread_join(t, NULL) == 0);
  printf("settled 5 rounds\n");
  return vt_finish();
}
