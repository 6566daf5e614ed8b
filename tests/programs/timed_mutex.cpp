// timed_mutex: timed lock attempts against a lock another thread holds for two units.
// For each lock type, the holder takes the lock at t0 and releases it at exactly t0 + 2 units
// (an absolute sleep); meanwhile the main thread
//  1. tries for one unit: fails after exactly one unit (the holder still has it);
//  2. tries for ten units: succeeds exactly when the holder releases, at t0 + 2 units.
// Lock types, with the glibc call libstdc++ 12 makes:
//  std::timed_mutex::try_lock_for / try_lock_until(steady_clock) -> pthread_mutex_clocklock
//  std::timed_mutex::try_lock_until(system_clock)                -> pthread_mutex_timedlock
//  std::recursive_timed_mutex::try_lock_for (and re-locking it while owned: immediate)
//  std::shared_timed_mutex::try_lock_shared_for / try_lock_for    -> pthread_rwlock_clock*lock
//  raw pthread_mutex_timedlock (CLOCK_REALTIME), pthread_mutex_clocklock (CLOCK_MONOTONIC),
//  pthread_rwlock_timedwrlock, pthread_rwlock_clockrdlock.
#include "check.h"

#include <pthread.h>

#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <thread>

namespace {

using std::chrono::nanoseconds;

struct Case {
  const char* name;
  std::function<void()> hold;                 // holder thread: acquire
  std::function<void()> release;              // holder thread: release
  std::function<bool(int64_t timeout)> try_;  // main thread: timed attempt
  std::function<void()> unlock;               // main thread: release after a successful try
};

bool pthread_result(int rc, const char* what) {
  if (rc != 0 && rc != ETIMEDOUT) vt_die(__FILE__, __LINE__, what, rc);
  return rc == 0;
}

void run(const Case& c, int64_t unit) {
  const int64_t t0 = vt_mono();
  std::promise<void> held;
  std::thread holder([&c, &held, t0, unit] {
    c.hold();
    held.set_value();
    const struct timespec until = vt_ts(t0 + 2 * unit);
    PT(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr));
    c.release();
  });
  held.get_future().wait();

  const int64_t t1 = vt_mono();
  if (vt_virtual()) CHECK_EQ(t1, t0);  // the frozen clock did not move while the holder locked
  const bool first = c.try_(unit);
  const int64_t t2 = vt_mono();
  if (first) c.unlock();  // wrongly acquired: release it so later cases do not cascade
  const bool second = c.try_(10 * unit);
  const int64_t t3 = vt_mono();
  printf("  %-42s 1st try %s after %lld ns; 2nd %s at %lld ns\n", c.name,
         first ? "ACQUIRED" : "timed out", static_cast<long long>(t2 - t1),
         second ? "acquired" : "TIMED OUT", static_cast<long long>(t3 - t0));
  CHECK(!first);
  CHECK(second);
  CHECK_ELAPSED(t2 - t1, unit);
  CHECK_ELAPSED(t3 - t0, 2 * unit);
  if (second) c.unlock();
  holder.join();
}

}  // namespace

int main() {
  vt_begin("timed_mutex");
  const int64_t unit = vt_unit(60 * VT_NS_PER_MS);
  using std::chrono::steady_clock;
  using std::chrono::system_clock;

  std::timed_mutex tm;
  run({"timed_mutex::try_lock_for", [&] { tm.lock(); }, [&] { tm.unlock(); },
       [&](int64_t t) { return tm.try_lock_for(nanoseconds(t)); }, [&] { tm.unlock(); }},
      unit);
  run({"timed_mutex::try_lock_until(steady_clock)", [&] { tm.lock(); }, [&] { tm.unlock(); },
       [&](int64_t t) { return tm.try_lock_until(steady_clock::now() + nanoseconds(t)); },
       [&] { tm.unlock(); }},
      unit);
  run({"timed_mutex::try_lock_until(system_clock)", [&] { tm.lock(); }, [&] { tm.unlock(); },
       [&](int64_t t) { return tm.try_lock_until(system_clock::now() + nanoseconds(t)); },
       [&] { tm.unlock(); }},
      unit);

  std::recursive_timed_mutex rtm;
  run({"recursive_timed_mutex::try_lock_for",
       [&] {
         rtm.lock();
         rtm.lock();
       },
       [&] {
         rtm.unlock();
         rtm.unlock();
       },
       [&](int64_t t) { return rtm.try_lock_for(nanoseconds(t)); },
       [&] {
         // Re-locking a recursive mutex we own succeeds at once, without waiting.
         const int64_t t0 = vt_mono();
         CHECK(rtm.try_lock_for(nanoseconds(10 * unit)));
         CHECK_ELAPSED(vt_mono() - t0, 0);
         rtm.unlock();
         rtm.unlock();
       }},
      unit);

  std::shared_timed_mutex stm;
  run({"shared_timed_mutex::try_lock_shared_for", [&] { stm.lock(); }, [&] { stm.unlock(); },
       [&](int64_t t) { return stm.try_lock_shared_for(nanoseconds(t)); },
       [&] { stm.unlock_shared(); }},
      unit);
  run({"shared_timed_mutex::try_lock_for", [&] { stm.lock_shared(); },
       [&] { stm.unlock_shared(); },
       [&](int64_t t) { return stm.try_lock_for(nanoseconds(t)); }, [&] { stm.unlock(); }},
      unit);

  pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
  run({"pthread_mutex_timedlock(REALTIME)", [&] { PT(pthread_mutex_lock(&pm)); },
       [&] { PT(pthread_mutex_unlock(&pm)); },
       [&](int64_t t) {
         const struct timespec deadline = vt_ts(vt_real() + t);
         return pthread_result(pthread_mutex_timedlock(&pm, &deadline), "pthread_mutex_timedlock");
       },
       [&] { PT(pthread_mutex_unlock(&pm)); }},
      unit);
  run({"pthread_mutex_clocklock(MONOTONIC)", [&] { PT(pthread_mutex_lock(&pm)); },
       [&] { PT(pthread_mutex_unlock(&pm)); },
       [&](int64_t t) {
         const struct timespec deadline = vt_ts(vt_mono() + t);
         return pthread_result(pthread_mutex_clocklock(&pm, CLOCK_MONOTONIC, &deadline),
                               "pthread_mutex_clocklock");
       },
       [&] { PT(pthread_mutex_unlock(&pm)); }},
      unit);

  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  run({"pthread_rwlock_timedwrlock(REALTIME)", [&] { PT(pthread_rwlock_rdlock(&rw)); },
       [&] { PT(pthread_rwlock_unlock(&rw)); },
       [&](int64_t t) {
         const struct timespec deadline = vt_ts(vt_real() + t);
         return pthread_result(pthread_rwlock_timedwrlock(&rw, &deadline),
                               "pthread_rwlock_timedwrlock");
       },
       [&] { PT(pthread_rwlock_unlock(&rw)); }},
      unit);
  run({"pthread_rwlock_clockrdlock(MONOTONIC)", [&] { PT(pthread_rwlock_wrlock(&rw)); },
       [&] { PT(pthread_rwlock_unlock(&rw)); },
       [&](int64_t t) {
         const struct timespec deadline = vt_ts(vt_mono() + t);
         return pthread_result(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &deadline),
                               "pthread_rwlock_clockrdlock");
       },
       [&] { PT(pthread_rwlock_unlock(&rw)); }},
      unit);

  return vt_finish();
}
