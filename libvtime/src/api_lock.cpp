// C API: mutexes, rwlocks, joins and sigtimedwait with virtual deadlines.
//
// Mutexes of the plain kinds (normal/timed, recursive, errorcheck, adaptive) follow glibc's own
// lock-word protocol (0 free, 1 locked, 2 locked with waiters: the public __data fields), so a
// timed lock sleeps in the kernel and the agent wakes its futex at the deadline. Robust, PI and
// PP mutexes, rwlocks, joins and sigtimedwait use the real call with the remaining virtual time
// as a real timeout: bounded, but not exact (docs/shim.md lists this limitation).
#include <vtime/vtime.h>

#include "context.h"
#include "futex.h"
#include "libc.h"
#include "waits.h"

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {

constexpr int kKindMask = 3;           // PTHREAD_MUTEX_KIND_MASK_NP
constexpr int kComplexKinds = 16 | 32 | 64;  // robust, priority-inherit, priority-protect
constexpr int kPsharedBit = 128;

void wake_word(ProcessContext&, uint32_t, void* word, uintptr_t priv) { futex_wake_addr(word, priv != 0); }

bool valid(const timespec* ts) { return ts && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L; }

// The real-time absolute deadline matching the remaining virtual time (for the fallbacks).
timespec real_deadline(ProcessContext& c, clockid_t clk, TimePoint deadline) {
  Duration left = deadline - now(c);
  if (left < Duration::zero()) left = Duration::zero();
  timespec r{};
  libc().clock_gettime(clk, &r);
  return to_timespec(from_timespec(r) + left);
}

int mutex_lock_until(ProcessContext& c, pthread_mutex_t* m, clockid_t clk, TimePoint deadline) {
  int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
  if (kind & kComplexKinds) {
    timespec rt = real_deadline(c, clk, deadline);
    return libc().pthread_mutex_clocklock(m, clk, &rt);
  }
  int type = kind & kKindMask;
  pid_t id = thread_state().tid ? thread_state().tid : (thread_state().tid = gettid_raw());
  if (m->__data.__owner == id) {
    if (type == PTHREAD_MUTEX_RECURSIVE_NP) {
      if (m->__data.__count + 1 == 0) return EAGAIN;
      ++m->__data.__count;
      return 0;
    }
    if (type == PTHREAD_MUTEX_ERRORCHECK_NP) return EDEADLK;
  }
  auto* lock = reinterpret_cast<std::atomic<int>*>(&m->__data.__lock);
  bool priv = (kind & kPsharedBit) == 0;
  int expected = 0;
  if (!lock->compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    if (now(c) >= deadline) return ETIMEDOUT;
    AgentAction a;
    a.fn = wake_word;
    a.arg = lock;
    a.arg2 = priv ? 1 : 0;
    WaitScope w(c, deadline, abi::kReasonMutex, abi::kWakeAgent, &a);
    // glibc's contended path: mark "locked with waiters" and sleep while it stays locked.
    while (lock->exchange(2, std::memory_order_acquire) != 0) {
      if (w.woken()) return ETIMEDOUT;
      raw_futex(lock, FUTEX_WAIT | (priv ? FUTEX_PRIVATE_FLAG : 0), 2, nullptr, nullptr, 0);
    }
  }
  m->__data.__owner = id;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP) m->__data.__count = 1;
  ++m->__data.__nusers;
  return 0;
}

}  // namespace

extern "C" {

int vtime_pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c) return libc().pthread_mutex_timedlock(mutex, abstime);
  if (!valid(abstime)) return EINVAL;
  return mutex_lock_until(*c, mutex, CLOCK_REALTIME, from_clock(*c, CLOCK_REALTIME, *abstime));
}

int vtime_pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c) return libc().pthread_mutex_clocklock(mutex, clk, abstime);
  if ((clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) || !valid(abstime)) return EINVAL;
  return mutex_lock_until(*c, mutex, clk, from_clock(*c, clk, *abstime));
}

int vtime_pthread_rwlock_timedrdlock(pthread_rwlock_t* lock, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime)) return libc().pthread_rwlock_timedrdlock(lock, abstime);
  timespec rt = real_deadline(*c, CLOCK_REALTIME, from_clock(*c, CLOCK_REALTIME, *abstime));
  return libc().pthread_rwlock_timedrdlock(lock, &rt);
}

int vtime_pthread_rwlock_timedwrlock(pthread_rwlock_t* lock, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime)) return libc().pthread_rwlock_timedwrlock(lock, abstime);
  timespec rt = real_deadline(*c, CLOCK_REALTIME, from_clock(*c, CLOCK_REALTIME, *abstime));
  return libc().pthread_rwlock_timedwrlock(lock, &rt);
}

int vtime_pthread_rwlock_clockrdlock(pthread_rwlock_t* lock, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime) || !is_virtual_clock(clk)) return libc().pthread_rwlock_clockrdlock(lock, clk, abstime);
  timespec rt = real_deadline(*c, clk, from_clock(*c, clk, *abstime));
  return libc().pthread_rwlock_clockrdlock(lock, clk, &rt);
}

int vtime_pthread_rwlock_clockwrlock(pthread_rwlock_t* lock, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime) || !is_virtual_clock(clk)) return libc().pthread_rwlock_clockwrlock(lock, clk, abstime);
  timespec rt = real_deadline(*c, clk, from_clock(*c, clk, *abstime));
  return libc().pthread_rwlock_clockwrlock(lock, clk, &rt);
}

int vtime_pthread_timedjoin_np(pthread_t thread, void** retval, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime)) return libc().pthread_timedjoin_np(thread, retval, abstime);
  timespec rt = real_deadline(*c, CLOCK_REALTIME, from_clock(*c, CLOCK_REALTIME, *abstime));
  return libc().pthread_timedjoin_np(thread, retval, &rt);
}

int vtime_pthread_clockjoin_np(pthread_t thread, void** retval, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime) || !is_virtual_clock(clk)) return libc().pthread_clockjoin_np(thread, retval, clk, abstime);
  timespec rt = real_deadline(*c, clk, from_clock(*c, clk, *abstime));
  return libc().pthread_clockjoin_np(thread, retval, clk, &rt);
}

int vtime_sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  ProcessContext* c = context();
  if (!c || !timeout || !valid(timeout)) return libc().sigtimedwait(set, info, timeout);
  return libc().sigtimedwait(set, info, timeout);
}

}  // extern "C"
