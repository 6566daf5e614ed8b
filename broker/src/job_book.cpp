// What the broker knows of the jobs (see job_book.h).
#include "job_book.h"

namespace vtime::broker {

using namespace vtime::protocol;

void JobBook::on_batsim_event(const Event& e) {
  if (auto* b = std::get_if<SimulationBegins>(&e.payload)) {
    nb_resources_ = b->nb_compute_resources;
  } else if (auto* s = std::get_if<JobSubmitted>(&e.payload)) {
    if (!retired_.contains(s->job_id) && jobs_.emplace(s->job_id, Job{s->job.res, State::kSubmitted}).second) ++submitted_;
  } else if (auto* c = std::get_if<JobCompleted>(&e.payload)) {
    if (auto it = jobs_.find(c->job_id); it != jobs_.end()) retire(it);
  } else if (auto* k = std::get_if<JobKilled>(&e.payload)) {
    for (auto& id : k->job_ids) {
      if (auto it = jobs_.find(id); it != jobs_.end()) retire(it);
    }
  } else if (auto* n = std::get_if<Notify>(&e.payload)) {
    if (n->type == "no_more_static_job_to_submit") no_more_static_ = true;
  }
}

void JobBook::on_decision(const Event& e) {
  if (auto* x = std::get_if<ExecuteJob>(&e.payload)) {
    auto it = jobs_.find(x->job_id);
    if (it != jobs_.end()) it->second.state = State::kRunning;
  } else if (auto* r = std::get_if<RejectJob>(&e.payload)) {
    if (auto it = jobs_.find(r->job_id); it != jobs_.end()) retire(it);
  }
}

void JobBook::retire(std::unordered_map<std::string, Job>::iterator it) {
  retired_.insert(it->first);
  jobs_.erase(it);
  ++done_;
}

bool JobBook::all_done() const { return no_more_static_ && done_ == submitted_; }

const JobBook::State* JobBook::find(const std::string& id) const {
  // Ended jobs are not told apart (done or rejected): the checks treat both alike.
  static constexpr State kEnded = State::kDone;
  auto it = jobs_.find(id);
  if (it != jobs_.end()) return &it->second.state;
  return retired_.contains(id) ? &kEnded : nullptr;
}

int JobBook::requested(const std::string& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? 0 : it->second.res;
}

}  // namespace vtime::broker
