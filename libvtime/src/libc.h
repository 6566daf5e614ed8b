// The real libc functions libvtime calls underneath its own versions.
//
// Why a table: inside libvtime-shim.so every libc name (poll, nanosleep, pthread_cond_wait's
// timed cousins...) is our own interposed definition, so calling `::poll` from libvtime would
// call ourselves. The shim build (VTIME_LIBC_RTLD_NEXT) resolves each entry with
// dlsym(RTLD_NEXT); everywhere else (libvtime.so/.a linked into a rewritten program) the entry
// is libc's own symbol.
#pragma once

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

namespace vtime::detail {

struct Libc {
  int (*clock_gettime)(clockid_t, timespec*);
  int (*clock_getres)(clockid_t, timespec*);
  int (*gettimeofday)(timeval*, void*);
  time_t (*time)(time_t*);
  int (*timespec_get)(timespec*, int);
  int (*nanosleep)(const timespec*, timespec*);
  int (*clock_nanosleep)(clockid_t, int, const timespec*, timespec*);
  int (*usleep)(useconds_t);
  unsigned (*sleep)(unsigned);
  int (*poll)(pollfd*, nfds_t, int);
  int (*ppoll)(pollfd*, nfds_t, const timespec*, const sigset_t*);
  int (*select)(int, fd_set*, fd_set*, fd_set*, timeval*);
  int (*pselect)(int, fd_set*, fd_set*, fd_set*, const timespec*, const sigset_t*);
  int (*epoll_wait)(int, epoll_event*, int, int);
  int (*epoll_pwait)(int, epoll_event*, int, int, const sigset_t*);
  int (*epoll_pwait2)(int, epoll_event*, int, const timespec*, const sigset_t*);
  int (*pthread_cond_wait)(pthread_cond_t*, pthread_mutex_t*);
  int (*pthread_cond_timedwait)(pthread_cond_t*, pthread_mutex_t*, const timespec*);
  int (*pthread_cond_clockwait)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
  int (*sem_timedwait)(sem_t*, const timespec*);
  int (*sem_clockwait)(sem_t*, clockid_t, const timespec*);
  int (*pthread_mutex_timedlock)(pthread_mutex_t*, const timespec*);
  int (*pthread_mutex_clocklock)(pthread_mutex_t*, clockid_t, const timespec*);
  int (*pthread_rwlock_timedrdlock)(pthread_rwlock_t*, const timespec*);
  int (*pthread_rwlock_timedwrlock)(pthread_rwlock_t*, const timespec*);
  int (*pthread_rwlock_clockrdlock)(pthread_rwlock_t*, clockid_t, const timespec*);
  int (*pthread_rwlock_clockwrlock)(pthread_rwlock_t*, clockid_t, const timespec*);
  int (*pthread_rwlock_unlock)(pthread_rwlock_t*);
  int (*pthread_timedjoin_np)(pthread_t, void**, const timespec*);
  int (*pthread_clockjoin_np)(pthread_t, void**, clockid_t, const timespec*);
  int (*sigtimedwait)(const sigset_t*, siginfo_t*, const timespec*);
  int (*sigwaitinfo)(const sigset_t*, siginfo_t*);
  unsigned (*alarm)(unsigned);
  int (*setitimer)(int, const itimerval*, itimerval*);
  int (*getitimer)(int, itimerval*);
  int (*timer_create)(clockid_t, sigevent*, timer_t*);
  int (*timer_settime)(timer_t, int, const itimerspec*, itimerspec*);
  int (*timer_gettime)(timer_t, itimerspec*);
  int (*timer_getoverrun)(timer_t);
  int (*timer_delete)(timer_t);
  int (*timerfd_create)(int, int);
  int (*timerfd_settime)(int, int, const itimerspec*, itimerspec*);
  int (*timerfd_gettime)(int, itimerspec*);
  int (*clock_settime)(clockid_t, const timespec*);
  int (*settimeofday)(const timeval*, const struct timezone*);
  int (*adjtimex)(struct timex*);
  int (*clock_adjtime)(clockid_t, struct timex*);
  int (*adjtime)(const timeval*, timeval*);
  int (*sched_yield)();
  ssize_t (*read)(int, void*, size_t);
  int (*close)(int);
  pid_t (*fork)();
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*execv)(const char*, char* const[]);
  int (*execvp)(const char*, char* const[]);
  int (*posix_spawn)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                     char* const[], char* const[]);
  int (*posix_spawnp)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                      char* const[], char* const[]);
};

// Resolved once, on first use; never null.
const Libc& libc();

}  // namespace vtime::detail
