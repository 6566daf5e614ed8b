// C++: every std:: form, spelled the ways real code spells them.
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vtime/std.h>

using namespace std::chrono_literals;

struct Waiter : std::condition_variable {
  std::mutex m;
  bool nap() {
    std::unique_lock<std::mutex> lock(m);
    return vtime::wait_for(*this, lock, 10ms) == std::cv_status::timeout;
  }
};

int main() {
  auto t0 = vtime::chrono::steady_clock::now();
  std::chrono::system_clock::time_point wall = vtime::chrono::system_clock::now();
  auto hr = vtime::chrono::high_resolution_clock::now();
  using clock = std::chrono::steady_clock;
  clock::time_point t1 = vtime::chrono::steady_clock::now();
  {
    using namespace std::chrono;
    auto t2 = vtime::chrono::steady_clock::now();
    (void)t2;
  }
  auto (*now_fn)() noexcept = &vtime::chrono::steady_clock::now;

  vtime::this_thread::sleep_for(1ms);
  vtime::this_thread::sleep_until(vtime::chrono::steady_clock::now() + 1ms);

  std::mutex m;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(m);
  vtime::wait_for(cv, lock, 1ms);
  vtime::wait_for(cv, lock, 1ms, [] { return true; });
  vtime::wait_until(cv, lock, t1 + 1ms);
  std::condition_variable* pcv = &cv;
  vtime::wait_until(*pcv, lock, wall + 1ms, [] { return true; });

  std::condition_variable_any cva;
  vtime::wait_for(cva, lock, 1ms);
  vtime::wait_until(cva, lock, vtime::chrono::steady_clock::now() + 1ms, [] { return true; });

  std::timed_mutex tm;
  if (vtime::try_lock_for(tm, 1ms)) tm.unlock();
  if (vtime::try_lock_until(tm, vtime::chrono::steady_clock::now() + 1ms)) tm.unlock();
  std::recursive_timed_mutex rtm;
  if (vtime::try_lock_for(rtm, 1ms)) rtm.unlock();

  std::promise<int> p;
  std::future<int> f = p.get_future();
  vtime::wait_for(f, 1ms);
  vtime::wait_until(f, vtime::chrono::steady_clock::now() + 1ms);
  p.set_value(1);
  std::shared_future<int> sf = f.share();
  vtime::wait_for(sf, 0s);

  Waiter w;
  w.nap();
  (void)hr;
  (void)now_fn;
  return static_cast<int>((vtime::chrono::steady_clock::now() - t0).count() < 0);
}
