// A background thread that wakes every `period` until stopped: the shape of a scheduler's
// periodic loop (condition_variable::wait_for with a predicate).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

class Periodic {
 public:
  explicit Periodic(std::chrono::seconds period) : period_(period) {}
  void start();
  int stop();  // joins the thread, returns how many periods elapsed

 private:
  void run();

  std::chrono::seconds period_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int ticks_ = 0;
  std::thread thread_;
};
