/* C: direct and qualified calls, function pointers, syscall(), macro arguments and bodies. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CHECK(expr) ((expr) == 0 ? 0 : -1)
#define NAP_US(us) usleep(us)

typedef int (*sleeper_fn)(const struct timespec*, struct timespec*);

static sleeper_fn pick(void) { return nanosleep; }

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;

int main(void) {
  struct timespec ts = {0, 1000};
  struct timeval tv;
  sleep(0);
  nanosleep(&ts, NULL);
  CHECK(clock_gettime(CLOCK_MONOTONIC, &ts));
  NAP_US(10);
  gettimeofday(&tv, NULL);
  time_t now = time(NULL);
  int (*get)(clockid_t, struct timespec*) = &clock_gettime;
  get(CLOCK_REALTIME, &ts);
  pick()(&ts, NULL);
  poll(NULL, 0, 1);
  int fd = timerfd_create(CLOCK_MONOTONIC, 0);
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  syscall(SYS_nanosleep, &ts, NULL);
  syscall(SYS_getpid);
  long nr = SYS_gettid;
  syscall(nr);
  struct timespec deadline = {0, 0};
  if (pthread_rwlock_timedwrlock(&table_lock, &deadline) == 0) pthread_rwlock_unlock(&table_lock);
  close(fd);
  return (int)(now & 1);
}
