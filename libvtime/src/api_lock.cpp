// C API: mutexes, rwlocks, joins and sigtimedwait with virtual deadlines.
//
// Mutexes of the plain kinds (normal/timed, recursive, errorcheck, adaptive) follow glibc's own
// lock-word protocol (0 free, 1 locked, 2 locked with waiters: the public __data fields), so a
// timed lock sleeps in the kernel and the agent wakes its futex at the deadline.
// Rwlocks: glibc's rwlock words are private, so a timed rwlock acquisition retries the trylock
// each time the lock is released in this process (pthread_rwlock_unlock is interposed and wakes
// the waiters registered for that lock) or the virtual deadline comes.
// sigtimedwait waits with the real sigwaitinfo on the set plus a reserved wake signal that the
// agent sends to the thread at the deadline.
// Robust, PI and PP mutexes and joins use the real call with the remaining virtual time as a real
// timeout: bounded, but not exact (docs/shim.md lists this limitation).
#include <vtime/vtime.h>

#include <vtime/internal/context.h>
#include <vtime/internal/cpu_charge.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>
#include "libc.h"
#include <vtime/internal/waits.h>

#include <sys/syscall.h>

#include <cerrno>
#include <mutex>
#include <vector>

using namespace vtime;
using namespace vtime::detail;

namespace {

constexpr int kKindMask = 3;           // PTHREAD_MUTEX_KIND_MASK_NP
constexpr int kComplexKinds = 16 | 32 | 64;  // robust, priority-inherit, priority-protect
constexpr int kPsharedBit = 128;

// The waiter in slot `slot` only (futex.h, waiter_bit): the others blocked on the mutex wait on.
void wake_word(ProcessContext&, uint32_t slot, void* word, uintptr_t priv) { futex_wake_bit(word, priv != 0, waiter_bit(slot)); }

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
    if (now(c) >= deadline) {
      charge_call(c);
      return ETIMEDOUT;
    }
    AgentAction a;
    a.fn = wake_word;
    a.lost_if_early = true;
    a.arg = lock;
    a.arg2 = priv ? 1 : 0;
    WaitScope w(c, deadline, abi::kReasonMutex, abi::kWakeAgent, &a);
    // glibc's contended path: mark "locked with waiters" and sleep while it stays locked.
    while (lock->exchange(2, std::memory_order_acquire) != 0) {
      if (w.woken()) return ETIMEDOUT;
      futex_wait_bit(lock, priv, 2, waiter_bit(w.slot()));
    }
  }
  m->__data.__owner = id;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP) m->__data.__count = 1;
  ++m->__data.__nusers;
  return 0;
}

// --- rwlocks ---------------------------------------------------------------------------------

struct RwWaiter {
  pthread_rwlock_t* lock;
  uint32_t slot;
  std::atomic<bool>* released;
};
std::mutex g_rw_mutex;
std::vector<RwWaiter> g_rw_waiters;   // guarded by g_rw_mutex
std::atomic<int> g_rw_count{0};       // lets unlock skip the mutex while nobody waits

int rwlock_until(ProcessContext& c, pthread_rwlock_t* lock, TimePoint deadline, bool write) {
  auto attempt = [&] { return write ? pthread_rwlock_trywrlock(lock) : pthread_rwlock_tryrdlock(lock); };
  for (;;) {
    int r = attempt();
    if (r != EBUSY) return r;
    if (now(c) >= deadline) {
      charge_call(c);
      return ETIMEDOUT;
    }
    std::atomic<bool> released{false};
    WaitScope w(c, deadline, abi::kReasonRwlock, abi::kWakeFutex);
    {
      std::lock_guard<std::mutex> g(g_rw_mutex);
      g_rw_waiters.push_back({lock, w.slot(), &released});
      g_rw_count.fetch_add(1);
    }
    r = attempt();  // an unlock between the first try and the registration is not lost
    auto& pw = c.seg->processes[c.proc_index].sleep_word;
    while (r == EBUSY && !released.load() && !w.woken()) {
      uint32_t word = pw.load(std::memory_order_acquire);
      if (released.load() || w.woken()) break;
      sleep_on(c, w.slot(), word);
    }
    {
      std::lock_guard<std::mutex> g(g_rw_mutex);
      for (size_t i = 0; i < g_rw_waiters.size(); ++i) {
        if (g_rw_waiters[i].released == &released) {
          g_rw_waiters.erase(g_rw_waiters.begin() + static_cast<long>(i));
          break;
        }
      }
      g_rw_count.fetch_sub(1);
    }
    if (r != EBUSY) return r;
    if (w.woken()) {
      // At the deadline: one last try, as the real call would have made.
      r = attempt();
      return r == EBUSY ? ETIMEDOUT : r;
    }
  }
}

// --- sigtimedwait ------------------------------------------------------------------------------

int wake_signal() { return SIGRTMAX; }

void ignore_signal(int) {}

void install_wake_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old{};
    sigaction(wake_signal(), nullptr, &old);
    if (old.sa_handler == SIG_DFL) {
      struct sigaction sa{};
      sa.sa_handler = ignore_signal;  // a late wake signal must never kill the program
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      sigaction(wake_signal(), &sa, nullptr);
    }
  });
}

void send_wake(ProcessContext& c, uint32_t, void*, uintptr_t tid) {
  raw_syscall6(SYS_tgkill, c.pid, static_cast<long>(tid), wake_signal(), 0, 0, 0);
}

int sigwait_until(ProcessContext& c, const sigset_t* set, siginfo_t* info, TimePoint deadline) {
  install_wake_handler();
  int wake = wake_signal();
  sigset_t both = *set, wake_only, old;
  sigaddset(&both, wake);
  sigemptyset(&wake_only);
  sigaddset(&wake_only, wake);
  pthread_sigmask(SIG_BLOCK, &wake_only, &old);
  pid_t tid = thread_state().tid ? thread_state().tid : (thread_state().tid = gettid_raw());
  AgentAction a;
  a.fn = send_wake;
  a.arg2 = static_cast<uintptr_t>(tid);
  siginfo_t local;
  siginfo_t* out = info ? info : &local;
  int r, err = 0;
  bool timed_out = false;
  for (;;) {
    if (now(c) >= deadline) {
      timespec zero{0, 0};
      r = libc().sigtimedwait(set, out, &zero);
      err = errno;
      if (r < 0) charge_call(c);
      break;
    }
    {
      WaitScope w(c, deadline, abi::kReasonSigwait, abi::kWakeAgent, &a);
      r = libc().sigwaitinfo(&both, out);
      err = errno;
      timed_out = w.woken();
    }
    if (r == wake) {
      if (timed_out) {
        r = -1;
        err = EAGAIN;
        break;
      }
      continue;  // a stray wake from an earlier wait
    }
    break;
  }
  if (timed_out && r != -1) {
    // The agent may have sent the wake signal as we returned: take it back before unblocking.
    timespec zero{0, 0};
    siginfo_t drop;
    libc().sigtimedwait(&wake_only, &drop, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return r;
}

}  // namespace

extern "C" {

int vtime_pthread_rwlock_unlock(pthread_rwlock_t* lock) {
  int r = libc().pthread_rwlock_unlock(lock);
  if (g_rw_count.load(std::memory_order_acquire) == 0) return r;
  ProcessContext* c = context();
  if (!c) return r;
  std::lock_guard<std::mutex> g(g_rw_mutex);
  for (auto& w : g_rw_waiters) {
    if (w.lock != lock) continue;
    w.released->store(true);
    auto& s = c->seg->waiters[w.slot];
    s.word.fetch_add(1, std::memory_order_acq_rel);  // ends the controller's proof of that sleeper
    wake_sleepers(*c->seg, c->proc_index, abi::sleep_bit(w.slot));
  }
  return r;
}

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
  return rwlock_until(*c, lock, from_clock(*c, CLOCK_REALTIME, *abstime), false);
}

int vtime_pthread_rwlock_timedwrlock(pthread_rwlock_t* lock, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime)) return libc().pthread_rwlock_timedwrlock(lock, abstime);
  return rwlock_until(*c, lock, from_clock(*c, CLOCK_REALTIME, *abstime), true);
}

int vtime_pthread_rwlock_clockrdlock(pthread_rwlock_t* lock, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime) || (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)) {
    return libc().pthread_rwlock_clockrdlock(lock, clk, abstime);
  }
  return rwlock_until(*c, lock, from_clock(*c, clk, *abstime), false);
}

int vtime_pthread_rwlock_clockwrlock(pthread_rwlock_t* lock, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c || !valid(abstime) || (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)) {
    return libc().pthread_rwlock_clockwrlock(lock, clk, abstime);
  }
  return rwlock_until(*c, lock, from_clock(*c, clk, *abstime), true);
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
  if (!c || !timeout || !valid(timeout) || timeout->tv_sec < 0 || (timeout->tv_sec == 0 && timeout->tv_nsec == 0)) {
    return libc().sigtimedwait(set, info, timeout);
  }
  return sigwait_until(*c, set, info, now(*c) + from_timespec(*timeout));
}

}  // extern "C"
