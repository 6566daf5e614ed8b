// future_wait: the C++ waits that libstdc++ 12 implements with a raw
// syscall(SYS_futex, FUTEX_WAIT_BITSET, absolute deadline) rather than a pthread call:
//  - std::future::wait_for / wait_until(steady_clock) (CLOCK_MONOTONIC deadline) and
//    wait_until(system_clock) (FUTEX_CLOCK_REALTIME deadline): timing out, then becoming ready
//    when std::async or a std::thread sets the promise after sleeping one unit;
//  - std::counting_semaphore::try_acquire_for / try_acquire_until: timing out, then succeeding
//    when another thread releases after one unit.
// Plus the POSIX semaphore timed waits: sem_timedwait (CLOCK_REALTIME) and sem_clockwait.
#include "check.h"

#include <semaphore.h>

#include <chrono>
#include <future>
#include <semaphore>
#include <thread>

namespace {

using std::chrono::nanoseconds;
using std::chrono::steady_clock;
using std::chrono::system_clock;

void report(const char* what, int64_t elapsed) {
  printf("  %-52s %lld ns\n", what, static_cast<long long>(elapsed));
}

void future_wait_for(int64_t unit) {
  std::promise<int> promise;
  std::future<int> future = promise.get_future();

  int64_t t0 = vt_mono();
  CHECK(future.wait_for(nanoseconds(2 * unit)) == std::future_status::timeout);
  int64_t elapsed = vt_mono() - t0;
  report("future::wait_for timeout", elapsed);
  CHECK_ELAPSED(elapsed, 2 * unit);

  t0 = vt_mono();
  std::future<void> setter = std::async(std::launch::async, [&promise, unit] {
    vt_sleep(unit);
    promise.set_value(42);
  });
  CHECK(future.wait_for(nanoseconds(10 * unit)) == std::future_status::ready);
  elapsed = vt_mono() - t0;
  report("future::wait_for ready (std::async setter)", elapsed);
  CHECK_ELAPSED(elapsed, unit);
  CHECK_EQ(future.get(), 42);
  setter.get();
}

template <typename Clock>
void future_wait_until(const char* timeout_name, const char* ready_name, int64_t unit) {
  std::promise<int> promise;
  std::future<int> future = promise.get_future();

  int64_t t0 = vt_mono();
  CHECK(future.wait_until(Clock::now() + nanoseconds(2 * unit)) == std::future_status::timeout);
  int64_t elapsed = vt_mono() - t0;
  report(timeout_name, elapsed);
  CHECK_ELAPSED(elapsed, 2 * unit);

  t0 = vt_mono();
  std::thread setter([&promise, unit] {
    vt_sleep(unit);
    promise.set_value(7);
  });
  CHECK(future.wait_until(Clock::now() + nanoseconds(10 * unit)) == std::future_status::ready);
  elapsed = vt_mono() - t0;
  report(ready_name, elapsed);
  CHECK_ELAPSED(elapsed, unit);
  CHECK_EQ(future.get(), 7);
  setter.join();
}

void semaphore_try_acquire(int64_t unit) {
  std::counting_semaphore<> sem(0);

  int64_t t0 = vt_mono();
  CHECK(!sem.try_acquire_for(nanoseconds(2 * unit)));
  int64_t elapsed = vt_mono() - t0;
  report("counting_semaphore::try_acquire_for timeout", elapsed);
  CHECK_ELAPSED(elapsed, 2 * unit);

  t0 = vt_mono();
  std::thread releaser([&sem, unit] {
    vt_sleep(unit);
    sem.release();
  });
  CHECK(sem.try_acquire_for(nanoseconds(10 * unit)));
  elapsed = vt_mono() - t0;
  report("counting_semaphore::try_acquire_for success", elapsed);
  CHECK_ELAPSED(elapsed, unit);
  releaser.join();

  t0 = vt_mono();
  CHECK(!sem.try_acquire_until(steady_clock::now() + nanoseconds(unit)));
  elapsed = vt_mono() - t0;
  report("counting_semaphore::try_acquire_until timeout", elapsed);
  CHECK_ELAPSED(elapsed, unit);
}

void posix_semaphore(int64_t unit) {
  sem_t sem;
  SYS(sem_init(&sem, 0, 0));

  int64_t t0 = vt_mono();
  struct timespec deadline = vt_ts(vt_real() + 2 * unit);
  CHECK(sem_timedwait(&sem, &deadline) == -1 && errno == ETIMEDOUT);
  int64_t elapsed = vt_mono() - t0;
  report("sem_timedwait timeout", elapsed);
  CHECK_ELAPSED(elapsed, 2 * unit);

  t0 = vt_mono();
  deadline = vt_ts(vt_mono() + unit);
  CHECK(sem_clockwait(&sem, CLOCK_MONOTONIC, &deadline) == -1 && errno == ETIMEDOUT);
  elapsed = vt_mono() - t0;
  report("sem_clockwait(MONOTONIC) timeout", elapsed);
  CHECK_ELAPSED(elapsed, unit);

  t0 = vt_mono();
  std::thread poster([&sem, unit] {
    vt_sleep(unit);
    SYS(sem_post(&sem));
  });
  deadline = vt_ts(vt_real() + 10 * unit);
  int rc;
  while ((rc = sem_timedwait(&sem, &deadline)) == -1 && errno == EINTR) {
  }
  CHECK_EQ(rc, 0);
  elapsed = vt_mono() - t0;
  report("sem_timedwait posted", elapsed);
  CHECK_ELAPSED(elapsed, unit);
  poster.join();
  SYS(sem_destroy(&sem));
}

}  // namespace

int main() {
  vt_begin("future_wait");
  const int64_t unit = vt_unit(50 * VT_NS_PER_MS);
  future_wait_for(unit);
  future_wait_until<steady_clock>("future::wait_until(steady_clock) timeout",
                                  "future::wait_until(steady_clock) ready", unit);
  future_wait_until<system_clock>("future::wait_until(system_clock) timeout",
                                  "future::wait_until(system_clock) ready", unit);
  semaphore_try_acquire(unit);
  posix_semaphore(unit);
  return vt_finish();
}
