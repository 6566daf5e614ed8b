#include "job_tracker.h"

#include "trace_input.h"

namespace vtime::recorder::tools {

using namespace vtime::protocol;

namespace {
// vtime sim (like Batsim) writes 10 us instead of a zero runtime.
constexpr Nanos kNullRuntime = Nanos::from_ns(10'000);
}  // namespace

const TrackedJob* JobTracker::find(const std::string& id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &jobs_[it->second];
}

TrackedJob* JobTracker::lookup(const std::string& id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &jobs_[it->second];
}

void JobTracker::add(const Json& rec) {
  if (str_or(rec, "type") != "msg") return;
  std::string dir = str_or(rec, "dir");
  if (dir != "from_batsim" && dir != "to_batsim") return;
  auto m = parse_msg(rec);
  if (!m) {
    problems_.push_back("seq " + std::to_string(int_or(rec, "seq")) + ": " + dir + " message: " + m.error());
    return;
  }
  if (dir == "to_batsim") {
    // A second reply without a Batsim message in between cannot happen in a sound trace; apply
    // the first so nothing is lost.
    if (held_reply_) apply(*held_reply_, {});
    held_reply_ = std::move(*m);
  } else {
    on_batsim(*m);
  }
}

void JobTracker::finish() {
  if (held_reply_) apply(*held_reply_, {});
  held_reply_.reset();
}

void JobTracker::on_batsim(const Message& m) {
  std::vector<const Event*> ends;
  for (const Event& e : m.events)
    if (std::holds_alternative<JobCompleted>(e.payload)) ends.push_back(&e);
  if (held_reply_) {
    apply(*held_reply_, ends);
    held_reply_.reset();
  }
  for (const Event& e : m.events) {
    if (auto* s = std::get_if<JobSubmitted>(&e.payload)) {
      if (index_.count(s->job_id)) continue;
      index_.emplace(s->job_id, jobs_.size());
      jobs_.push_back(TrackedJob{s->job_id, s->job, std::nullopt, std::nullopt, {}, {}});
    } else if (std::holds_alternative<JobCompleted>(e.payload)) {
      complete(e);  // no-op when apply() already placed it
    } else if (auto* b = std::get_if<SimulationBegins>(&e.payload)) {
      resources_.clear();
      for (const Resource& r : b->compute_resources) resources_.push_back({r.id, r.name});
    }
  }
  now_ = m.now;
}

void JobTracker::complete(const Event& e) {
  const auto& c = std::get<JobCompleted>(e.payload);
  TrackedJob* j = lookup(c.job_id);
  if (j == nullptr || !j->final_state.empty()) return;
  // The event's timestamp is the simulator's clock when the job's end timer fired: its end.
  j->end = e.timestamp;
  j->final_state = std::string(to_string(c.job_state));
  if (!j->start) j->start = e.timestamp;  // an end without a start: only in a damaged trace
  if (j->alloc.empty()) j->alloc = c.alloc;
  row(*j);
}

void JobTracker::apply(const Message& reply, const std::vector<const Event*>& ends) {
  Nanos clock = now_;
  size_t next_end = 0;
  for (const Event& e : reply.events) {
    // Simulation::apply: a decision stamped after the clock first fires every timer due by then.
    if (e.timestamp > clock) {
      while (next_end < ends.size() && ends[next_end]->timestamp <= e.timestamp) complete(*ends[next_end++]);
      clock = e.timestamp;
    }
    if (auto* x = std::get_if<ExecuteJob>(&e.payload)) {
      TrackedJob* j = lookup(x->job_id);
      if (j == nullptr || j->start) continue;  // the simulator refused it: the run ended there
      j->start = clock;
      j->alloc = x->alloc;
    } else if (auto* r = std::get_if<RejectJob>(&e.payload)) {
      TrackedJob* j = lookup(r->job_id);
      if (j == nullptr || j->start || !j->final_state.empty()) continue;
      j->final_state = "REJECTED";
      row(*j);
    } else if (auto* k = std::get_if<KillJob>(&e.payload)) {
      // Only jobs still running are killed (and get a row); finished ones are acknowledged.
      for (const std::string& id : k->job_ids) {
        TrackedJob* j = lookup(id);
        if (j == nullptr || !j->start || !j->final_state.empty()) continue;
        j->end = clock;
        j->final_state = "COMPLETED_KILLED";
        row(*j);
      }
    }
  }
}

void JobTracker::row(TrackedJob& j) {
  std::string name = j.id, workload;
  if (auto bang = j.id.find('!'); bang != std::string::npos) {
    workload = j.id.substr(0, bang);
    name = j.id.substr(bang + 1);
  }
  using sim::SimTime;
  std::optional<SimTime> walltime;
  if (j.desc.walltime) walltime = SimTime::from_nanos(*j.desc.walltime);
  sim::JobRow r{name, workload, j.desc.profile, SimTime::from_nanos(j.desc.subtime), j.desc.res, walltime, std::nullopt};
  if (j.final_state != "REJECTED") {
    Nanos runtime = *j.end - *j.start;
    if (runtime == Nanos::zero()) runtime = kNullRuntime;
    r.run = sim::JobRow::Run{j.final_state, j.final_state == "COMPLETED_SUCCESSFULLY", SimTime::from_nanos(*j.start),
                             SimTime::from_nanos(runtime), j.alloc.to_string()};
  }
  rows_.push_back(std::move(r));
}

}  // namespace vtime::recorder::tools
