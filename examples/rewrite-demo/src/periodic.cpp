#include "periodic.h"

void Periodic::start() { thread_ = std::thread([this] { run(); }); }

int Periodic::stop() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  return ticks_;
}

void Periodic::run() {
  std::unique_lock<std::mutex> lock(m_);
  while (!stopping_) {
    if (!cv_.wait_for(lock, period_, [this] { return stopping_; })) ++ticks_;
  }
}
