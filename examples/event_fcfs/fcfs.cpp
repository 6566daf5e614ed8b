#include "fcfs.h"

#include <variant>

namespace event_fcfs {

using namespace vtime::protocol;

Message Fcfs::on_message(const Message& in) {
  Message out{in.now, {}, {}};
  bool tick = false;
  for (const Event& e : in.events) {
    if (const auto* b = std::get_if<SimulationBegins>(&e.payload)) {
      nb_resources_ = b->nb_compute_resources;
      for (const auto& r : b->compute_resources) free_.insert(r.id);
    } else if (const auto* s = std::get_if<JobSubmitted>(&e.payload)) {
      queue_.push_back({s->job_id, s->job.res});
    } else if (const auto* c = std::get_if<JobCompleted>(&e.payload)) {
      for (int id : c->alloc.ids()) free_.insert(id);
    } else if (const auto* n = std::get_if<Notify>(&e.payload)) {
      if (n->type == "no_more_static_job_to_submit") no_more_jobs_ = true;
    } else if (std::holds_alternative<RequestedCall>(e.payload)) {
      call_pending_ = false;
      tick = true;
    } else if (std::holds_alternative<SimulationEnds>(e.payload)) {
      ended_ = true;
      return out;  // the reply to SIMULATION_ENDS must carry nothing
    }
  }
  bool periodic = period_ > Nanos::zero();
  if (!periodic || tick) schedule(in.now, out.events);
  // Keep the periodic loop alive while decisions may still be needed.
  if (periodic && !call_pending_ && !(no_more_jobs_ && queue_.empty())) {
    out.events.push_back(Event{in.now, CallMeLater{in.now + period_}, {}});
    call_pending_ = true;
  }
  return out;
}

void Fcfs::schedule(Nanos now, std::vector<Event>& out) {
  while (!queue_.empty()) {
    const Waiting& head = queue_.front();
    if (head.res > nb_resources_) {
      // It can never run here; rejecting it keeps the simulation from stalling.
      out.push_back(Event{now, RejectJob{head.id}, {}});
      queue_.pop_front();
      continue;
    }
    if (static_cast<size_t>(head.res) > free_.size()) break;  // strict FCFS: the head blocks
    std::vector<int> ids;
    for (auto it = free_.begin(); static_cast<int>(ids.size()) < head.res; it = free_.erase(it)) ids.push_back(*it);
    out.push_back(Event{now, ExecuteJob{head.id, ResourceSet::from_ids(std::move(ids)), {}}, {}});
    queue_.pop_front();
  }
}

}  // namespace event_fcfs
