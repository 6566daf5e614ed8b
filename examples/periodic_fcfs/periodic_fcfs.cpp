#include "periodic_fcfs.h"

#include "decision_cost.h"

#include <time.h>

#include <variant>

namespace periodic_fcfs {

using namespace vtime::protocol;

namespace {

}  // namespace

PeriodicFcfs::PeriodicFcfs(std::chrono::nanoseconds period, std::chrono::nanoseconds work)
    : period_(period), work_(work) {}

PeriodicFcfs::~PeriodicFcfs() { stop(); }

Message PeriodicFcfs::on_message(const Message& in) {
  Message out{in.now, {}, {}};
  bool begins = false;
  {
    std::lock_guard lock(mu_);
    for (const Event& e : in.events) {
      if (const auto* b = std::get_if<SimulationBegins>(&e.payload)) {
        nb_resources_ = b->nb_compute_resources;
        for (const auto& r : b->compute_resources) free_.insert(r.id);
        begins = true;
      } else if (const auto* s = std::get_if<JobSubmitted>(&e.payload)) {
        queue_.push_back({s->job_id, s->job.res});
      } else if (const auto* c = std::get_if<JobCompleted>(&e.payload)) {
        for (int id : c->alloc.ids()) free_.insert(id);
      } else if (std::holds_alternative<SimulationEnds>(e.payload)) {
        ended_ = true;
        outbox_.clear();
        return out;  // the reply to SIMULATION_ENDS must carry nothing
      }
    }
    // The decisions made since the last reply, stamped with this message's time: they reach
    // Batsim now (a tick's time is the instant the pass ran).
    for (Payload& p : outbox_) out.events.push_back(Event{in.now, std::move(p), {}});
    outbox_.clear();
  }
  // The loop starts now, so its first wait ends at the SIMULATION_BEGINS time plus one period.
  if (begins && !thread_.joinable()) thread_ = std::thread(&PeriodicFcfs::loop, this);
  return out;
}

void PeriodicFcfs::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicFcfs::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    // A relative wait, as periodic schedulers write it; with the clock frozen while the pass
    // computes, the next deadline is exactly one period after this one.
    if (cv_.wait_for(lock, period_, [this] { return stopping_; })) return;
    std::vector<Payload> decided = fcfs_pass();
    if (work_ > std::chrono::nanoseconds::zero()) {
      // Think without holding the lock: the protocol thread keeps answering meanwhile.
      lock.unlock();
      examples::spend_cpu(work_);
      lock.lock();
      if (stopping_) return;
    }
    for (Payload& p : decided) outbox_.push_back(std::move(p));
  }
}

std::vector<Payload> PeriodicFcfs::fcfs_pass() {
  std::vector<Payload> out;
  while (!queue_.empty()) {
    const Waiting& head = queue_.front();
    if (head.res > nb_resources_) {
      // It can never run here; rejecting it keeps the simulation from stalling.
      out.emplace_back(RejectJob{head.id});
      queue_.pop_front();
      continue;
    }
    if (static_cast<size_t>(head.res) > free_.size()) break;  // strict FCFS: the head blocks
    std::vector<int> ids;
    for (auto it = free_.begin(); static_cast<int>(ids.size()) < head.res; it = free_.erase(it)) ids.push_back(*it);
    out.emplace_back(ExecuteJob{head.id, ResourceSet::from_ids(std::move(ids)), {}});
    queue_.pop_front();
  }
  return out;
}

}  // namespace periodic_fcfs
