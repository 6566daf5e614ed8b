// Resolution of the real libc functions (see libc.h for why).
#include "libc.h"

#include <dlfcn.h>
#include <sys/syscall.h>

#include <cstdio>
#include <cstdlib>

namespace vtime::detail {
namespace {

// D may differ from F by noexcept (glibc declares most of these __THROW).
// Plain dlsym gives each symbol's default version (pthread_cond_* @GLIBC_2.3.2, timer_*
// @GLIBC_2.3.3: the current ABIs), and finds a sanitizer's interceptor when one sits between us
// and libc; dlvsym with an explicit version skipped TSan's unversioned interceptors, so TSan never
// saw a condition wait release its mutex.
template <typename F, typename D>
void resolve(F& slot, const char* name, D direct_fn) {
  F direct = direct_fn;
#ifdef VTIME_LIBC_RTLD_NEXT
  void* p = dlsym(RTLD_NEXT, name);
  if (p) {
    slot = reinterpret_cast<F>(p);
    return;
  }
  (void)direct;
  // A libc without this function (older glibc): keep a null entry; callers check has().
  slot = nullptr;
#else
  (void)name;
  slot = direct;
#endif
}

Libc load() {
  Libc l{};
  resolve(l.clock_gettime, "clock_gettime", &::clock_gettime);
  resolve(l.clock_getres, "clock_getres", &::clock_getres);
  resolve(l.gettimeofday, "gettimeofday", reinterpret_cast<int (*)(timeval*, void*)>(&::gettimeofday));
  resolve(l.time, "time", &::time);
  resolve(l.timespec_get, "timespec_get", &::timespec_get);
  resolve(l.nanosleep, "nanosleep", &::nanosleep);
  resolve(l.clock_nanosleep, "clock_nanosleep", &::clock_nanosleep);
  resolve(l.usleep, "usleep", &::usleep);
  resolve(l.sleep, "sleep", &::sleep);
  resolve(l.poll, "poll", &::poll);
  resolve(l.ppoll, "ppoll", &::ppoll);
  resolve(l.select, "select", &::select);
  resolve(l.pselect, "pselect", &::pselect);
  resolve(l.epoll_wait, "epoll_wait", &::epoll_wait);
  resolve(l.epoll_pwait, "epoll_pwait", &::epoll_pwait);
  resolve(l.epoll_pwait2, "epoll_pwait2", &::epoll_pwait2);
  resolve(l.pthread_cond_wait, "pthread_cond_wait", &::pthread_cond_wait);
  resolve(l.pthread_cond_timedwait, "pthread_cond_timedwait", &::pthread_cond_timedwait);
  resolve(l.pthread_cond_clockwait, "pthread_cond_clockwait", &::pthread_cond_clockwait);
  resolve(l.sem_timedwait, "sem_timedwait", &::sem_timedwait);
  resolve(l.sem_clockwait, "sem_clockwait", &::sem_clockwait);
  resolve(l.pthread_mutex_timedlock, "pthread_mutex_timedlock", &::pthread_mutex_timedlock);
  resolve(l.pthread_mutex_clocklock, "pthread_mutex_clocklock", &::pthread_mutex_clocklock);
  resolve(l.pthread_rwlock_timedrdlock, "pthread_rwlock_timedrdlock", &::pthread_rwlock_timedrdlock);
  resolve(l.pthread_rwlock_timedwrlock, "pthread_rwlock_timedwrlock", &::pthread_rwlock_timedwrlock);
  resolve(l.pthread_rwlock_clockrdlock, "pthread_rwlock_clockrdlock", &::pthread_rwlock_clockrdlock);
  resolve(l.pthread_rwlock_clockwrlock, "pthread_rwlock_clockwrlock", &::pthread_rwlock_clockwrlock);
  resolve(l.pthread_rwlock_unlock, "pthread_rwlock_unlock", &::pthread_rwlock_unlock);
  resolve(l.pthread_timedjoin_np, "pthread_timedjoin_np", &::pthread_timedjoin_np);
  resolve(l.pthread_clockjoin_np, "pthread_clockjoin_np", &::pthread_clockjoin_np);
  resolve(l.sigtimedwait, "sigtimedwait", &::sigtimedwait);
  resolve(l.sigwaitinfo, "sigwaitinfo", &::sigwaitinfo);
  resolve(l.alarm, "alarm", &::alarm);
  resolve(l.setitimer, "setitimer", reinterpret_cast<int (*)(int, const itimerval*, itimerval*)>(&::setitimer));
  resolve(l.getitimer, "getitimer", reinterpret_cast<int (*)(int, itimerval*)>(&::getitimer));
  resolve(l.timer_create, "timer_create", &::timer_create);
  resolve(l.timer_settime, "timer_settime", &::timer_settime);
  resolve(l.timer_gettime, "timer_gettime", &::timer_gettime);
  resolve(l.timer_getoverrun, "timer_getoverrun", &::timer_getoverrun);
  resolve(l.timer_delete, "timer_delete", &::timer_delete);
  resolve(l.timerfd_create, "timerfd_create", reinterpret_cast<int (*)(int, int)>(&::timerfd_create));
  resolve(l.timerfd_settime, "timerfd_settime", &::timerfd_settime);
  resolve(l.timerfd_gettime, "timerfd_gettime", &::timerfd_gettime);
  resolve(l.clock_settime, "clock_settime", &::clock_settime);
  resolve(l.settimeofday, "settimeofday", &::settimeofday);
  resolve(l.adjtimex, "adjtimex", &::adjtimex);
  resolve(l.clock_adjtime, "clock_adjtime", &::clock_adjtime);
  resolve(l.adjtime, "adjtime", &::adjtime);
  resolve(l.sched_yield, "sched_yield", &::sched_yield);
  resolve(l.read, "read", &::read);
  resolve(l.close, "close", &::close);
  resolve(l.fork, "fork", &::fork);
  resolve(l.execve, "execve", &::execve);
  resolve(l.execvpe, "execvpe", &::execvpe);
  resolve(l.execv, "execv", &::execv);
  resolve(l.execvp, "execvp", &::execvp);
  resolve(l.posix_spawn, "posix_spawn", &::posix_spawn);
  resolve(l.posix_spawnp, "posix_spawnp", &::posix_spawnp);
  return l;
}

}  // namespace

const Libc& libc() {
  static const Libc table = load();
  return table;
}

}  // namespace vtime::detail
