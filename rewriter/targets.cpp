// The target table. C functions come from DESIGN.md section 3 and map 1:1 to libvtime's C API
// (vtime/vtime.h, identical signatures, so calls and address-takings are both rewritten by
// renaming). The C++ forms map to the header-only API in vtime/std.h.
#include "targets.h"

#include <sys/syscall.h>

#include <algorithm>
#include <array>

namespace vtime::rewriter {
namespace {

constexpr Target C(std::string_view q, std::string_view r) { return {q, r, Form::Name, Header::C}; }
constexpr Target Cxx(std::string_view q, std::string_view r) { return {q, r, Form::Name, Header::Cxx}; }
constexpr Target Mem(std::string_view q, std::string_view r, int lo, int hi) {
  return {q, r, Form::Member, Header::Cxx, lo, hi};
}
constexpr Target None(std::string_view q) { return {q, "", Form::Unsupported, Header::C}; }

constexpr std::array kTargets{
    // clocks
    C("clock_gettime", "vtime_clock_gettime"), C("clock_getres", "vtime_clock_getres"),
    C("gettimeofday", "vtime_gettimeofday"), C("time", "vtime_time"),
    C("timespec_get", "vtime_timespec_get"),
    // setting the clock (the session's virtual clock, never the host's)
    C("clock_settime", "vtime_clock_settime"), C("settimeofday", "vtime_settimeofday"),
    C("stime", "vtime_stime"), C("adjtimex", "vtime_adjtimex"), C("ntp_adjtime", "vtime_adjtimex"),
    C("clock_adjtime", "vtime_clock_adjtime"), C("adjtime", "vtime_adjtime"),
    C("ntp_gettime", "vtime_ntp_gettime"), C("ntp_gettimex", "vtime_ntp_gettime"),
    // sleeps
    C("nanosleep", "vtime_nanosleep"), C("clock_nanosleep", "vtime_clock_nanosleep"),
    C("usleep", "vtime_usleep"), C("sleep", "vtime_sleep"), C("sched_yield", "vtime_sched_yield"),
    // fd waits
    C("poll", "vtime_poll"), C("ppoll", "vtime_ppoll"), C("select", "vtime_select"),
    C("pselect", "vtime_pselect"), C("epoll_wait", "vtime_epoll_wait"),
    C("epoll_pwait", "vtime_epoll_pwait"), C("epoll_pwait2", "vtime_epoll_pwait2"),
    // timed synchronisation
    C("pthread_cond_timedwait", "vtime_pthread_cond_timedwait"),
    C("pthread_cond_clockwait", "vtime_pthread_cond_clockwait"),
    C("sem_timedwait", "vtime_sem_timedwait"), C("sem_clockwait", "vtime_sem_clockwait"),
    C("pthread_mutex_timedlock", "vtime_pthread_mutex_timedlock"),
    C("pthread_mutex_clocklock", "vtime_pthread_mutex_clocklock"),
    C("pthread_rwlock_timedrdlock", "vtime_pthread_rwlock_timedrdlock"),
    C("pthread_rwlock_timedwrlock", "vtime_pthread_rwlock_timedwrlock"),
    C("pthread_rwlock_clockrdlock", "vtime_pthread_rwlock_clockrdlock"),
    C("pthread_rwlock_clockwrlock", "vtime_pthread_rwlock_clockwrlock"),
    // A timed rwlock waiter is woken by the unlock (libvtime cannot see glibc's rwlock words).
    C("pthread_rwlock_unlock", "vtime_pthread_rwlock_unlock"),
    C("pthread_timedjoin_np", "vtime_pthread_timedjoin_np"),
    C("pthread_clockjoin_np", "vtime_pthread_clockjoin_np"),
    C("sigtimedwait", "vtime_sigtimedwait"),
    // timers
    C("alarm", "vtime_alarm"), C("setitimer", "vtime_setitimer"), C("getitimer", "vtime_getitimer"),
    C("timer_create", "vtime_timer_create"), C("timer_settime", "vtime_timer_settime"),
    C("timer_gettime", "vtime_timer_gettime"), C("timer_getoverrun", "vtime_timer_getoverrun"),
    C("timer_delete", "vtime_timer_delete"), C("timerfd_create", "vtime_timerfd_create"),
    C("timerfd_settime", "vtime_timerfd_settime"), C("timerfd_gettime", "vtime_timerfd_gettime"),
    // raw system calls
    Target{"syscall", "vtime_syscall", Form::Syscall, Header::C},
    // time functions libvtime has no replacement for yet: reported, never silently left
    None("ftime"), None("mq_timedreceive"), None("mq_timedsend"),
    // std::chrono clocks (libstdc++ puts them in the inline namespace _V2, dropped here)
    Cxx("std::chrono::system_clock::now", "vtime::chrono::system_clock::now"),
    Cxx("std::chrono::steady_clock::now", "vtime::chrono::steady_clock::now"),
    Cxx("std::chrono::high_resolution_clock::now", "vtime::chrono::high_resolution_clock::now"),
    Cxx("std::this_thread::sleep_for", "vtime::this_thread::sleep_for"),
    Cxx("std::this_thread::sleep_until", "vtime::this_thread::sleep_until"),
    // member forms: argument counts exclude the object; others (stop_token overloads) reported
    Mem("std::condition_variable::wait_for", "vtime::wait_for", 2, 3),
    Mem("std::condition_variable::wait_until", "vtime::wait_until", 2, 3),
    Mem("std::condition_variable_any::wait_for", "vtime::wait_for", 2, 3),
    Mem("std::condition_variable_any::wait_until", "vtime::wait_until", 2, 3),
    Mem("std::timed_mutex::try_lock_for", "vtime::try_lock_for", 1, 1),
    Mem("std::timed_mutex::try_lock_until", "vtime::try_lock_until", 1, 1),
    Mem("std::recursive_timed_mutex::try_lock_for", "vtime::try_lock_for", 1, 1),
    Mem("std::recursive_timed_mutex::try_lock_until", "vtime::try_lock_until", 1, 1),
    // libstdc++ declares future's waits in its base __basic_future (shared with shared_future)
    Mem("std::__basic_future::wait_for", "vtime::wait_for", 1, 1),
    Mem("std::__basic_future::wait_until", "vtime::wait_until", 1, 1),
    Mem("std::future::wait_for", "vtime::wait_for", 1, 1),
    Mem("std::future::wait_until", "vtime::wait_until", 1, 1),
    Mem("std::shared_future::wait_for", "vtime::wait_for", 1, 1),
    Mem("std::shared_future::wait_until", "vtime::wait_until", 1, 1),
};

std::string_view short_name(std::string_view q) {
  auto pos = q.rfind("::");
  return pos == std::string_view::npos ? q : q.substr(pos + 2);
}

}  // namespace

const Target* find_target(std::string_view qualified) {
  auto it = std::find_if(kTargets.begin(), kTargets.end(),
                         [&](const Target& t) { return t.qualified == qualified; });
  return it == kTargets.end() ? nullptr : &*it;
}

bool is_target_short_name(std::string_view name) {
  return std::any_of(kTargets.begin(), kTargets.end(),
                     [&](const Target& t) { return short_name(t.qualified) == name; });
}

bool is_cxx_short_name(std::string_view name) {
  return std::any_of(kTargets.begin(), kTargets.end(), [&](const Target& t) {
    return t.header == Header::Cxx && short_name(t.qualified) == name;
  });
}

bool is_time_syscall(long long number) {
  static constexpr std::array kNumbers{
      static_cast<long long>(SYS_clock_gettime), static_cast<long long>(SYS_clock_getres),
      static_cast<long long>(SYS_gettimeofday),  static_cast<long long>(SYS_nanosleep),
      static_cast<long long>(SYS_clock_nanosleep), static_cast<long long>(SYS_futex),
      static_cast<long long>(SYS_clock_settime), static_cast<long long>(SYS_settimeofday),
      static_cast<long long>(SYS_adjtimex),      static_cast<long long>(SYS_clock_adjtime),
#ifdef SYS_time
      static_cast<long long>(SYS_time),
#endif
  };
  return std::find(kNumbers.begin(), kNumbers.end(), number) != kNumbers.end();
}

}  // namespace vtime::rewriter
