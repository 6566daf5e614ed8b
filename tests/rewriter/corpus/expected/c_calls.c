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
#include <vtime/vtime.h>

#define CHECK(expr) ((expr) == 0 ? 0 : -1)
#define NAP_US(us) vtime_usleep(us)

typedef int (*sleeper_fn)(const struct timespec*, struct timespec*);

static sleeper_fn pick(void) { return vtime_nanosleep; }

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;

int main(void) {
  struct timespec ts = {0, 1000};
  struct timeval tv;
  vtime_sleep(0);
  vtime_nanosleep(&ts, NULL);
  CHECK(vtime_clock_gettime(CLOCK_MONOTONIC, &ts));
  NAP_US(10);
  vtime_gettimeofday(&tv, NULL);
  time_t now = vtime_time(NULL);
  int (*get)(clockid_t, struct timespec*) = &vtime_clock_gettime;
  get(CLOCK_REALTIME, &ts);
  pick()(&ts, NULL);
  vtime_poll(NULL, 0, 1);
  int fd = vtime_timerfd_create(CLOCK_MONOTONIC, 0);
  vtime_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  vtime_syscall(SYS_nanosleep, &ts, NULL);
  syscall(SYS_getpid);
  long nr = SYS_gettid;
  vtime_syscall(nr);
  struct timespec deadline = {0, 0};
  if (vtime_pthread_rwlock_timedwrlock(&table_lock, &deadline) == 0) vtime_pthread_rwlock_unlock(&table_lock);
  close(fd);
  return (int)(now & 1);
}
