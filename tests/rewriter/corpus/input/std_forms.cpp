// C++: every std:: form, spelled the ways real code spells them.
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

struct Waiter : std::condition_variable {
  std::mutex m;
  bool nap() {
    std::unique_lock<std::mutex> lock(m);
    return wait_for(lock, 10ms) == std::cv_status::timeout;
  }
};

int main() {
  auto t0 = std::chrono::steady_clock::now();
  std::chrono::system_clock::time_point wall = std::chrono::system_clock::now();
  auto hr = std::chrono::high_resolution_clock::now();
  using clock = std::chrono::steady_clock;
  clock::time_point t1 = clock::now();
  {
    using namespace std::chrono;
    auto t2 = steady_clock::now();
    (void)t2;
  }
  auto (*now_fn)() noexcept = &std::chrono::steady_clock::now;

  std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_until(clock::now() + 1ms);

  std::mutex m;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(m);
  cv.wait_for(lock, 1ms);
  cv.wait_for(lock, 1ms, [] { return true; });
  cv.wait_until(lock, t1 + 1ms);
  std::condition_variable* pcv = &cv;
  pcv->wait_until(lock, wall + 1ms, [] { return true; });

  std::condition_variable_any cva;
  cva.wait_for(lock, 1ms);
  cva.wait_until(lock, clock::now() + 1ms, [] { return true; });

  std::timed_mutex tm;
  if (tm.try_lock_for(1ms)) tm.unlock();
  if (tm.try_lock_until(clock::now() + 1ms)) tm.unlock();
  std::recursive_timed_mutex rtm;
  if (rtm.try_lock_for(1ms)) rtm.unlock();

  std::promise<int> p;
  std::future<int> f = p.get_future();
  f.wait_for(1ms);
  f.wait_until(clock::now() + 1ms);
  p.set_value(1);
  std::shared_future<int> sf = f.share();
  sf.wait_for(0s);

  Waiter w;
  w.nap();
  (void)hr;
  (void)now_fn;
  return static_cast<int>((clock::now() - t0).count() < 0);
}
