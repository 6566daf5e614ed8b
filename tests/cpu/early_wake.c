// Timed waits that reach their deadline before they block: three threads each make short
// timed futex waits (syscall(SYS_futex), the form raw-futex programs use) and condition waits
// on objects of their own, while a fourth computes, so that under --cpu-model real the clock runs
// and deadlines pass while the waiters are still on their way to their blocking call (cpu_cases.py
// widens that stretch with strace). A wake-up made then used to be lost: the waiter slept forever.
//
//   early_wake [WAITS]   prints "done N waits" once every waiter made WAITS waits of each kind
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kWaiters = 3 };
static pthread_mutex_t g_mutex[kWaiters];
static pthread_cond_t g_cond[kWaiters];
static int g_word[kWaiters];
static atomic_int g_done;
static int g_waits = 30;

static void* waiter(void* arg) {
  int me = (int)(long)arg;
  for (int i = 0; i < g_waits; ++i) {
    struct timespec rel = {0, 300000};
    syscall(SYS_futex, &g_word[me], FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
    struct timespec abs;
    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_nsec += 300000;
    if (abs.tv_nsec >= 1000000000) {
      abs.tv_sec += 1;
      abs.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&g_mutex[me]);
    pthread_cond_timedwait(&g_cond[me], &g_mutex[me], &abs);
    pthread_mutex_unlock(&g_mutex[me]);
  }
  atomic_fetch_add(&g_done, 1);
  return NULL;
}

static void* spinner(void* arg) {
  (void)arg;
  volatile unsigned long n = 0;
  while (atomic_load(&g_done) < kWaiters) ++n;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_waits = atoi(argv[1]);
  pthread_t w[kWaiters], s;
  for (int i = 0; i < kWaiters; ++i) {
    pthread_mutex_init(&g_mutex[i], NULL);
    pthread_cond_init(&g_cond[i], NULL);
  }
  pthread_create(&s, NULL, spinner, NULL);
  for (int i = 0; i < kWaiters; ++i) pthread_create(&w[i], NULL, waiter, (void*)(long)i);
  for (int i = 0; i < kWaiters; ++i) pthread_join(w[i], NULL);
  pthread_join(s, NULL);
  printf("done %d waits\n", kWaiters * g_waits * 2);
  return 0;
}
