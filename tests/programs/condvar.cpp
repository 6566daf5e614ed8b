// condvar: timed condition waits, each run twice:
//  - timing out: nobody notifies; the wait reports a timeout after exactly its timeout;
//  - notified: another thread sleeps one unit, then sets the flag and notifies; the wait reports
//    no timeout and returns after exactly that unit (its own timeout is ten units).
// Variants, with the glibc call libstdc++ 12 makes for each:
//  std::condition_variable::wait_for (pred and cv_status forms) -> pthread_cond_clockwait(MONOTONIC)
//  std::condition_variable::wait_until(steady_clock)            -> pthread_cond_clockwait(MONOTONIC)
//  std::condition_variable::wait_until(system_clock)            -> pthread_cond_timedwait
//  raw pthread_cond_timedwait (default attr: CLOCK_REALTIME deadline)
//  raw pthread_cond_timedwait on a condvar with pthread_condattr_setclock(CLOCK_MONOTONIC)
//  raw pthread_cond_clockwait(CLOCK_MONOTONIC) and (CLOCK_REALTIME)
#include "check.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace {

struct Outcome {
  bool flag_seen;  // the notifier's flag was set when the wait returned
  bool timed_out;  // the last wait call reported a timeout
};

// A condition to wait on with a timeout, and the matching notification.
class Waitable {
 public:
  virtual ~Waitable() = default;
  virtual const char* name() const = 0;
  virtual Outcome wait(int64_t timeout_ns) = 0;
  virtual void notify() = 0;
};

class StdWaitable : public Waitable {
 public:
  enum class Mode { kWaitForPred, kWaitFor, kWaitUntilSteady, kWaitUntilSystem };
  explicit StdWaitable(Mode mode) : mode_(mode) {}

  const char* name() const override {
    switch (mode_) {
      case Mode::kWaitForPred: return "condition_variable::wait_for(pred)";
      case Mode::kWaitFor: return "condition_variable::wait_for";
      case Mode::kWaitUntilSteady: return "condition_variable::wait_until(steady_clock)";
      case Mode::kWaitUntilSystem: return "condition_variable::wait_until(system_clock)";
    }
    return "?";
  }

  Outcome wait(int64_t timeout_ns) override {
    using namespace std::chrono;
    const nanoseconds timeout{timeout_ns};
    std::unique_lock<std::mutex> lock(mutex_);
    std::cv_status status = std::cv_status::no_timeout;
    switch (mode_) {
      case Mode::kWaitForPred: {
        const bool seen = cv_.wait_for(lock, timeout, [this] { return flag_; });
        return Outcome{seen, !seen};
      }
      case Mode::kWaitFor: {
        const auto deadline = steady_clock::now() + timeout;
        while (!flag_ && status == std::cv_status::no_timeout) {
          status = cv_.wait_for(lock, deadline - steady_clock::now());
        }
        break;
      }
      case Mode::kWaitUntilSteady: {
        const auto deadline = steady_clock::now() + timeout;
        while (!flag_ && status == std::cv_status::no_timeout) {
          status = cv_.wait_until(lock, deadline);
        }
        break;
      }
      case Mode::kWaitUntilSystem: {
        const auto deadline = system_clock::now() + timeout;
        while (!flag_ && status == std::cv_status::no_timeout) {
          status = cv_.wait_until(lock, deadline);
        }
        break;
      }
    }
    return Outcome{flag_, status == std::cv_status::timeout};
  }

  void notify() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      flag_ = true;
    }
    cv_.notify_one();
  }

 private:
  Mode mode_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool flag_ = false;
};

// The C-style API used directly.
class PthreadWaitable : public Waitable {
 public:
  enum class Mode { kTimedwaitRealtime, kTimedwaitMonotonicAttr, kClockwaitMonotonic, kClockwaitRealtime };
  explicit PthreadWaitable(Mode mode) : mode_(mode) {
    pthread_condattr_t attr;
    PT(pthread_condattr_init(&attr));
    if (mode_ == Mode::kTimedwaitMonotonicAttr) {
      PT(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC));
    }
    PT(pthread_cond_init(&cond_, &attr));
    PT(pthread_condattr_destroy(&attr));
  }
  ~PthreadWaitable() override {
    pthread_cond_destroy(&cond_);
    pthread_mutex_destroy(&mutex_);
  }
  PthreadWaitable(const PthreadWaitable&) = delete;
  PthreadWaitable& operator=(const PthreadWaitable&) = delete;

  const char* name() const override {
    switch (mode_) {
      case Mode::kTimedwaitRealtime: return "pthread_cond_timedwait(REALTIME)";
      case Mode::kTimedwaitMonotonicAttr: return "pthread_cond_timedwait(condattr MONOTONIC)";
      case Mode::kClockwaitMonotonic: return "pthread_cond_clockwait(MONOTONIC)";
      case Mode::kClockwaitRealtime: return "pthread_cond_clockwait(REALTIME)";
    }
    return "?";
  }

  Outcome wait(int64_t timeout_ns) override {
    const clockid_t clock =
        mode_ == Mode::kTimedwaitRealtime || mode_ == Mode::kClockwaitRealtime ? CLOCK_REALTIME
                                                                               : CLOCK_MONOTONIC;
    const struct timespec deadline = vt_ts(vt_now(clock) + timeout_ns);
    PT(pthread_mutex_lock(&mutex_));
    int rc = 0;
    while (!flag_ && rc == 0) {
      if (mode_ == Mode::kClockwaitMonotonic || mode_ == Mode::kClockwaitRealtime) {
        rc = pthread_cond_clockwait(&cond_, &mutex_, clock, &deadline);
      } else {
        rc = pthread_cond_timedwait(&cond_, &mutex_, &deadline);
      }
      if (rc != 0 && rc != ETIMEDOUT) vt_die(__FILE__, __LINE__, name(), rc);
    }
    const Outcome outcome{flag_, rc == ETIMEDOUT};
    PT(pthread_mutex_unlock(&mutex_));
    return outcome;
  }

  void notify() override {
    PT(pthread_mutex_lock(&mutex_));
    flag_ = true;
    PT(pthread_cond_signal(&cond_));
    PT(pthread_mutex_unlock(&mutex_));
  }

 private:
  Mode mode_;
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond_;
  bool flag_ = false;
};

std::unique_ptr<Waitable> make(int i) {
  switch (i) {
    case 0: return std::make_unique<StdWaitable>(StdWaitable::Mode::kWaitForPred);
    case 1: return std::make_unique<StdWaitable>(StdWaitable::Mode::kWaitFor);
    case 2: return std::make_unique<StdWaitable>(StdWaitable::Mode::kWaitUntilSteady);
    case 3: return std::make_unique<StdWaitable>(StdWaitable::Mode::kWaitUntilSystem);
    case 4: return std::make_unique<PthreadWaitable>(PthreadWaitable::Mode::kTimedwaitRealtime);
    case 5: return std::make_unique<PthreadWaitable>(PthreadWaitable::Mode::kTimedwaitMonotonicAttr);
    case 6: return std::make_unique<PthreadWaitable>(PthreadWaitable::Mode::kClockwaitMonotonic);
    case 7: return std::make_unique<PthreadWaitable>(PthreadWaitable::Mode::kClockwaitRealtime);
    default: return nullptr;
  }
}

void run_timeout(Waitable& w, int64_t unit) {
  const int64_t t0 = vt_mono();
  const Outcome o = w.wait(2 * unit);
  const int64_t elapsed = vt_mono() - t0;
  printf("  %-46s timeout:  %lld ns\n", w.name(), static_cast<long long>(elapsed));
  CHECK(o.timed_out);
  CHECK(!o.flag_seen);
  CHECK_ELAPSED(elapsed, 2 * unit);
}

void run_notified(Waitable& w, int64_t unit) {
  // t0 is read before the notifier starts its sleep, so natively the wake is never early.
  const int64_t t0 = vt_mono();
  std::thread notifier([&w, unit] {
    vt_sleep(unit);
    w.notify();
  });
  const Outcome o = w.wait(10 * unit);
  const int64_t elapsed = vt_mono() - t0;
  notifier.join();
  printf("  %-46s notified: %lld ns\n", w.name(), static_cast<long long>(elapsed));
  CHECK(o.flag_seen);
  CHECK(!o.timed_out);
  CHECK_ELAPSED(elapsed, unit);
}

}  // namespace

int main() {
  vt_begin("condvar");
  const int64_t unit = vt_unit(50 * VT_NS_PER_MS);
  for (int i = 0;; ++i) {
    std::unique_ptr<Waitable> w = make(i);
    if (!w) break;
    run_timeout(*w, unit);
    std::unique_ptr<Waitable> fresh = make(i);
    run_notified(*fresh, unit);
  }
  return vt_finish();
}
