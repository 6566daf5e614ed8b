// vtime C++ API: drop-in replacements for the std:: time facilities, header-only, on top of
// libvtime's C API (vtime/vtime.h).
//
// What it is for: `vtime rewrite` turns the std::chrono / std::this_thread / timed-wait forms of
// programs LD_PRELOAD cannot reach (static binaries) into these. Inside a vtime session they
// read and wait on the virtual clock; with no session every vtime_* call goes to libc, so each
// function behaves exactly like the libstdc++ code it replaces (the bodies below mirror
// libstdc++ 12 step by step, with libc's time calls swapped for vtime_*).
//
// Example (what the rewriter produces):
//     #include <vtime/std.h>
//     auto t0 = vtime::chrono::steady_clock::now();        // std::chrono::steady_clock::now()
//     vtime::this_thread::sleep_for(std::chrono::hours(1)); // std::this_thread::sleep_for(1h)
//     vtime::wait_for(cv, lock, 5s, [&] { return done; });  // cv.wait_for(lock, 5s, pred)
//     vtime::try_lock_for(timed_mutex, 10ms);               // m.try_lock_for(10ms)
//     vtime::wait_for(future, 1s);                          // future.wait_for(1s)
//
// The clocks' now() return the std clocks' time_point types, so declarations such as
// `std::chrono::steady_clock::time_point t = ...` keep compiling unchanged.
//
// Two forms need libstdc++ internals, because the standard types expose no native handle:
// std::condition_variable_any (its private condition_variable and mutex) and std::future /
// std::shared_future (the futex word of the shared state, which libstdc++ itself waits on with
// syscall(SYS_futex, FUTEX_WAIT_BITSET)). They are reached with the explicit-instantiation
// access rule (access checks do not apply to explicit instantiations) and, for the future's
// state pointer, a layout check; every assumption is a static_assert, so a libstdc++ whose
// layout differs fails to compile instead of misbehaving. A polling loop (wait_for(0) plus
// short virtual sleeps) was rejected: it is not exact and wakes the broker for nothing.
// With another standard library these overloads are absent and such calls do not compile.
#ifndef VTIME_STD_H
#define VTIME_STD_H

#include <vtime/vtime.h>

#include <linux/futex.h>
#include <sys/syscall.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <ratio>
#include <type_traits>

namespace vtime {

namespace chrono {
struct system_clock;
struct steady_clock;
}  // namespace chrono

namespace detail {

inline std::chrono::nanoseconds read_clock(clockid_t clk) noexcept {
  struct timespec ts {};
  vtime_clock_gettime(clk, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// The clock id behind a clock type, or -1 for clocks vtime does not know (user clocks).
template <class Clock>
inline constexpr int clock_id =
    std::is_same_v<Clock, std::chrono::system_clock> || std::is_same_v<Clock, chrono::system_clock>
        ? CLOCK_REALTIME
    : std::is_same_v<Clock, std::chrono::steady_clock> || std::is_same_v<Clock, chrono::steady_clock>
        ? CLOCK_MONOTONIC
        : -1;

// A duration as a timespec, saturated at the largest representable one and at zero below:
// an overflowing deadline means "forever", a negative one "already expired".
template <class Rep, class Period>
struct timespec to_timespec(const std::chrono::duration<Rep, Period>& d) noexcept {
  using std::chrono::duration;
  if (d <= d.zero()) return {0, 0};
  if (duration<double>(d).count() >= static_cast<double>(std::numeric_limits<std::time_t>::max() / 2))
    return {std::numeric_limits<std::time_t>::max() / 2, 999999999};
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d - s);
  return {static_cast<std::time_t>(s.count()), static_cast<long>(ns.count())};
}

template <class Clock, class Dur>
struct timespec to_timespec(const std::chrono::time_point<Clock, Dur>& tp) noexcept {
  return to_timespec(tp.time_since_epoch());
}

template <class Clock>
typename Clock::time_point now_of() noexcept(noexcept(Clock::now())) {
  if constexpr (clock_id<Clock> == CLOCK_REALTIME) {
    return typename Clock::time_point(
        std::chrono::duration_cast<typename Clock::duration>(read_clock(CLOCK_REALTIME)));
  } else if constexpr (clock_id<Clock> == CLOCK_MONOTONIC) {
    return typename Clock::time_point(
        std::chrono::duration_cast<typename Clock::duration>(read_clock(CLOCK_MONOTONIC)));
  } else {
    return Clock::now();
  }
}

// now + d on the steady clock, rounded up like libstdc++ (__detail::ceil) and saturated.
template <class Rep, class Period>
std::chrono::steady_clock::time_point steady_deadline(const std::chrono::duration<Rep, Period>& d) {
  using dur = std::chrono::steady_clock::duration;
  const auto now = now_of<std::chrono::steady_clock>();
  if (std::chrono::duration<double>(d).count() >=
      std::chrono::duration<double>(std::chrono::steady_clock::time_point::max() - now).count())
    return std::chrono::steady_clock::time_point::max();
  return now + std::chrono::ceil<dur>(d);
}

}  // namespace detail

// ---- clocks --------------------------------------------------------------------------------

namespace chrono {

struct system_clock {
  using rep = std::chrono::system_clock::rep;
  using period = std::chrono::system_clock::period;
  using duration = std::chrono::system_clock::duration;
  using time_point = std::chrono::system_clock::time_point;
  static constexpr bool is_steady = std::chrono::system_clock::is_steady;

  static time_point now() noexcept { return detail::now_of<std::chrono::system_clock>(); }
  static std::time_t to_time_t(const time_point& t) noexcept { return std::chrono::system_clock::to_time_t(t); }
  static time_point from_time_t(std::time_t t) noexcept { return std::chrono::system_clock::from_time_t(t); }
};

struct steady_clock {
  using rep = std::chrono::steady_clock::rep;
  using period = std::chrono::steady_clock::period;
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;
  static constexpr bool is_steady = std::chrono::steady_clock::is_steady;

  static time_point now() noexcept { return detail::now_of<std::chrono::steady_clock>(); }
};

// Whatever std's high_resolution_clock aliases (system_clock in libstdc++).
using high_resolution_clock =
    std::conditional_t<std::is_same_v<std::chrono::high_resolution_clock, std::chrono::system_clock>, system_clock,
                       steady_clock>;

}  // namespace chrono

// ---- sleeps --------------------------------------------------------------------------------

namespace this_thread {

template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& d) {
  if (d <= d.zero()) return;
  struct timespec ts = detail::to_timespec(d);
  while (vtime_nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

template <class Clock, class Dur>
void sleep_until(const std::chrono::time_point<Clock, Dur>& tp) {
  auto now = detail::now_of<Clock>();
  if constexpr (Clock::is_steady) {
    if (now < tp) sleep_for(tp - now);
    return;
  }
  while (now < tp) {
    sleep_for(tp - now);
    now = detail::now_of<Clock>();
  }
}

}  // namespace this_thread

// ---- std::condition_variable ----------------------------------------------------------------

template <class Clock, class Dur>
std::cv_status wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          const std::chrono::time_point<Clock, Dur>& tp) {
  if constexpr (detail::clock_id<Clock> >= 0) {
    const struct timespec ts = detail::to_timespec(tp);
    vtime_pthread_cond_clockwait(cv.native_handle(), lock.mutex()->native_handle(), detail::clock_id<Clock>, &ts);
    return detail::now_of<Clock>() < tp ? std::cv_status::no_timeout : std::cv_status::timeout;
  } else {
    // A user clock: wait on the steady clock for the same delta, as libstdc++ does.
    const auto c_entry = Clock::now();
    const auto s_atime = detail::steady_deadline(tp - c_entry);
    if (wait_until(cv, lock, s_atime) == std::cv_status::no_timeout) return std::cv_status::no_timeout;
    return Clock::now() < tp ? std::cv_status::no_timeout : std::cv_status::timeout;
  }
}

template <class Clock, class Dur, class Pred>
bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                const std::chrono::time_point<Clock, Dur>& tp, Pred pred) {
  while (!pred())
    if (wait_until(cv, lock, tp) == std::cv_status::timeout) return pred();
  return true;
}

template <class Rep, class Period>
std::cv_status wait_for(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                        const std::chrono::duration<Rep, Period>& d) {
  return wait_until(cv, lock, detail::steady_deadline(d));
}

template <class Rep, class Period, class Pred>
bool wait_for(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
              const std::chrono::duration<Rep, Period>& d, Pred pred) {
  return wait_until(cv, lock, detail::steady_deadline(d), std::move(pred));
}

// ---- std::timed_mutex, std::recursive_timed_mutex -------------------------------------------

namespace detail {

template <class M, class Clock, class Dur>
bool try_lock_until(M& m, const std::chrono::time_point<Clock, Dur>& tp) {
  if constexpr (clock_id<Clock> >= 0) {
    const struct timespec ts = to_timespec(tp);
    return vtime_pthread_mutex_clocklock(m.native_handle(), clock_id<Clock>, &ts) == 0;
  } else {
    auto now = Clock::now();
    do {
      if (try_lock_until(m, steady_deadline(tp - now))) return true;
      now = Clock::now();
    } while (tp > now);
    return false;
  }
}

template <class M, class Rep, class Period>
bool try_lock_for(M& m, const std::chrono::duration<Rep, Period>& d) {
  using clock = std::chrono::steady_clock;
  auto rt = std::chrono::duration_cast<clock::duration>(d);
  if (std::ratio_greater<clock::period, Period>()) ++rt;
  return try_lock_until(m, now_of<clock>() + rt);
}

}  // namespace detail

template <class Rep, class Period>
bool try_lock_for(std::timed_mutex& m, const std::chrono::duration<Rep, Period>& d) {
  return detail::try_lock_for(m, d);
}
template <class Rep, class Period>
bool try_lock_for(std::recursive_timed_mutex& m, const std::chrono::duration<Rep, Period>& d) {
  return detail::try_lock_for(m, d);
}
template <class Clock, class Dur>
bool try_lock_until(std::timed_mutex& m, const std::chrono::time_point<Clock, Dur>& tp) {
  return detail::try_lock_until(m, tp);
}
template <class Clock, class Dur>
bool try_lock_until(std::recursive_timed_mutex& m, const std::chrono::time_point<Clock, Dur>& tp) {
  return detail::try_lock_until(m, tp);
}

#if defined(__GLIBCXX__)
// ---- libstdc++ internals: condition_variable_any and futures ---------------------------------

namespace detail {

// Explicit instantiations may name private members; the hidden friend hands the member
// pointer out. One tag per member.
template <class Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type get(Tag) noexcept { return Member; }
};

struct CvAnyCond {
  using type = std::condition_variable std::condition_variable_any::*;
  friend type get(CvAnyCond) noexcept;
};
struct CvAnyMutex {
  using type = std::shared_ptr<std::mutex> std::condition_variable_any::*;
  friend type get(CvAnyMutex) noexcept;
};
struct FutureStatus {
  using type = std::__atomic_futex_unsigned<> std::__future_base::_State_baseV2::*;
  friend type get(FutureStatus) noexcept;
};
template struct Expose<CvAnyCond, &std::condition_variable_any::_M_cond>;
template struct Expose<CvAnyMutex, &std::condition_variable_any::_M_mutex>;
template struct Expose<FutureStatus, &std::__future_base::_State_baseV2::_M_status>;

// The futex word libstdc++ waits on: __atomic_futex_unsigned holds one atomic<unsigned>, whose
// top bit says a waiter sleeps in the kernel (then the setter issues FUTEX_WAKE).
static_assert(sizeof(std::__atomic_futex_unsigned<>) == sizeof(std::atomic<unsigned>));
static_assert(std::is_standard_layout_v<std::__atomic_futex_unsigned<>>);
inline constexpr unsigned kFutexWaiterBit = 0x80000000u;
inline constexpr unsigned kFutureReady = 1;  // _State_baseV2::_Status::__ready

// __basic_future<R> (base of future<R> and shared_future<R>) holds exactly one
// shared_ptr<_State_baseV2>, so as a standard-layout class it is pointer-interconvertible with it.
template <class R>
std::__future_base::_State_baseV2* state_of(const std::__basic_future<R>& f) noexcept {
  using Ptr = std::shared_ptr<std::__future_base::_State_baseV2>;
  static_assert(sizeof(std::__basic_future<R>) == sizeof(Ptr));
  static_assert(std::is_standard_layout_v<std::__basic_future<R>>);
  return reinterpret_cast<const Ptr&>(f).get();
}

// libstdc++'s _State_baseV2::wait_until with its futex wait done through vtime_syscall.
template <class R>
std::future_status future_wait_abs(const std::__basic_future<R>& f, int clk, const struct timespec& abs) {
  // Ready, deferred (never waits) or an invalid future (throws), exactly as the original.
  const std::future_status first = f.wait_for(std::chrono::seconds::zero());
  if (first != std::future_status::timeout) return first;
  auto& word = reinterpret_cast<std::atomic<unsigned>&>(state_of(f)->*get(FutureStatus{}));
  const int op = FUTEX_WAIT_BITSET | (clk == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
  for (;;) {
    const unsigned v = word.load(std::memory_order_acquire) & ~kFutexWaiterBit;
    if (v == kFutureReady) break;
    word.fetch_or(kFutexWaiterBit, std::memory_order_relaxed);
    const long r = vtime_syscall(SYS_futex, static_cast<void*>(&word), static_cast<long>(op),
                                 static_cast<long>(v | kFutexWaiterBit), &abs, static_cast<void*>(nullptr),
                                 static_cast<long>(FUTEX_BITSET_MATCH_ANY));
    if (r == -1 && errno == ETIMEDOUT) {
      if ((word.load(std::memory_order_acquire) & ~kFutexWaiterBit) == kFutureReady) break;
      return std::future_status::timeout;
    }
  }
  f.wait();  // joins an async future's thread, as libstdc++'s timed waits do (LWG 2100)
  return std::future_status::ready;
}

template <class R, class Clock, class Dur>
std::future_status future_wait_until(const std::__basic_future<R>& f, const std::chrono::time_point<Clock, Dur>& tp) {
  if constexpr (clock_id<Clock> >= 0) {
    return future_wait_abs(f, clock_id<Clock>, to_timespec(tp));
  } else {
    std::future_status s;
    do {
      s = future_wait_abs(f, CLOCK_MONOTONIC, to_timespec(steady_deadline(tp - Clock::now())));
      if (s != std::future_status::timeout) return s;
    } while (Clock::now() < tp);
    return s;
  }
}

template <class R, class Rep, class Period>
std::future_status future_wait_for(const std::__basic_future<R>& f, const std::chrono::duration<Rep, Period>& d) {
  const std::future_status first = f.wait_for(std::chrono::seconds::zero());
  if (first != std::future_status::timeout || d <= d.zero()) return first;
  return future_wait_abs(f, CLOCK_MONOTONIC, to_timespec(steady_deadline(d)));
}

// Unlocks the user's lock for the duration of a condition_variable_any wait.
template <class Lock>
struct Relock {
  explicit Relock(Lock& l) : lock(l) { lock.unlock(); }
  ~Relock() noexcept(false) {
    if (std::uncaught_exceptions() > pending) {
      try {
        lock.lock();
      } catch (...) {
      }
    } else {
      lock.lock();
    }
  }
  Relock(const Relock&) = delete;
  Relock& operator=(const Relock&) = delete;
  Lock& lock;
  int pending = std::uncaught_exceptions();
};

}  // namespace detail

// ---- std::condition_variable_any ------------------------------------------------------------

template <class Lock, class Clock, class Dur>
std::cv_status wait_until(std::condition_variable_any& cv, Lock& lock, const std::chrono::time_point<Clock, Dur>& tp) {
  // libstdc++'s own sequence: take the internal mutex, release the user's lock, wait on the
  // internal condition variable; the internal lock is released before the user's is retaken.
  std::shared_ptr<std::mutex> m = cv.*get(detail::CvAnyMutex{});
  std::unique_lock<std::mutex> internal(*m);
  detail::Relock<Lock> relock(lock);
  std::unique_lock<std::mutex> internal2(std::move(internal));
  return wait_until(cv.*get(detail::CvAnyCond{}), internal2, tp);
}

template <class Lock, class Clock, class Dur, class Pred>
bool wait_until(std::condition_variable_any& cv, Lock& lock, const std::chrono::time_point<Clock, Dur>& tp,
                Pred pred) {
  while (!pred())
    if (wait_until(cv, lock, tp) == std::cv_status::timeout) return pred();
  return true;
}

template <class Lock, class Rep, class Period>
std::cv_status wait_for(std::condition_variable_any& cv, Lock& lock, const std::chrono::duration<Rep, Period>& d) {
  return wait_until(cv, lock, detail::steady_deadline(d));
}

template <class Lock, class Rep, class Period, class Pred>
bool wait_for(std::condition_variable_any& cv, Lock& lock, const std::chrono::duration<Rep, Period>& d, Pred pred) {
  return wait_until(cv, lock, detail::steady_deadline(d), std::move(pred));
}

// ---- std::future, std::shared_future ----------------------------------------------------------

template <class R, class Rep, class Period>
std::future_status wait_for(const std::future<R>& f, const std::chrono::duration<Rep, Period>& d) {
  return detail::future_wait_for(f, d);
}
template <class R, class Rep, class Period>
std::future_status wait_for(const std::shared_future<R>& f, const std::chrono::duration<Rep, Period>& d) {
  return detail::future_wait_for(f, d);
}
template <class R, class Clock, class Dur>
std::future_status wait_until(const std::future<R>& f, const std::chrono::time_point<Clock, Dur>& tp) {
  return detail::future_wait_until(f, tp);
}
template <class R, class Clock, class Dur>
std::future_status wait_until(const std::shared_future<R>& f, const std::chrono::time_point<Clock, Dur>& tp) {
  return detail::future_wait_until(f, tp);
}

#endif  // __GLIBCXX__

}  // namespace vtime

#endif  // VTIME_STD_H
