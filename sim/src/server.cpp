// Batsim's server actor (Batsim 4.2.1, server.cpp): receives every internal message, keeps the
// simulation's books, appends events for the scheduler and starts a request-reply actor whenever
// the scheduler is ready, nothing else is waiting in its mailbox, and there is something to say.
#include "simulation.h"

namespace vtime::sim::detail {

kernel::Body Simulation::server() {
  append(begins());
  co_await engine_.create(master_, send_to_scheduler(false));
  for (;;) {
    std::unique_ptr<kernel::Parcel> parcel = co_await engine_.get(server_box_);
    Ip& m = static_cast<Ip&>(*parcel);
    switch (m.type) {
      case Ip::submitter_hello: ++submitters_; break;
      case Ip::submitter_bye:
        if (++submitters_done_ == 1) append(Notify{"no_more_static_job_to_submit", {}});
        break;
      case Ip::job_submitted:
        for (WorkloadJob& wj : m.jobs) {
          size_t j = wj.index;
          phase_[j] = Phase::submitted;
          ++nb_submitted_;
          ++stats_.nb_jobs;
          JobSubmitted s;
          s.job_id = wj.id;
          s.job = JobDescription{wj.id, wj.res, wj.subtime, wj.walltime, workload_.profiles[wj.profile].name};
          s.job_json = std::move(wj.json);  // only JOB_SUBMITTED needs it: a job in flight holds less
          append(std::move(s));
          live_[j].job = LiveJob{wj.walltime, wj.res, static_cast<uint32_t>(wj.profile)};
        }
        break;
      case Ip::job_completed: {
        --nb_running_;
        ++nb_completed_;
        const JobRun& r = live_.at(m.slot);
        append(JobCompleted{full_id(m.slot), r.state, r.return_code, r.alloc, {}});
        record(m.slot);
        break;
      }
      case Ip::killing_done: {
        for (const std::string& id : m.ids) {
          size_t j = *find_job(id);
          auto it = live_.find(j);
          if (it == live_.end() || it->second.state != JobState::completed_killed || phase_[j] != Phase::finished)
            continue;
          --nb_running_;
          ++nb_completed_;
          append(JobCompleted{id, JobState::completed_killed, it->second.return_code, it->second.alloc, {}});
          record(j);
        }
        append(JobKilled{m.ids, job_progress_json(m.progress), {}});
        --nb_killers_;
        break;
      }
      case Ip::waiting_done:
        append(RequestedCall{});
        --nb_waiters_;
        break;
      case Ip::sched_ready:
        sched_ready_ = true;
        if (end_sent_) end_ack_ = true;
        break;
      case Ip::decision: {
        std::optional<kernel::Body> create;
        int host = master_;
        std::string err = decide(m.what, create, host);
        if (!err.empty()) {
          fail(Outcome::invalid_reply, "invalid reply to " + context(m.message, m.message_now) + ": event " + std::to_string(m.event) + " (" +
                                           std::string(type_name(m.what)) + "): " + err);
          co_return;
        }
        if (create) {
          kernel::Engine::Await made = engine_.create(host, std::move(*create));
          if (just_started_) live_.at(*std::exchange(just_started_, std::nullopt)).actor = made.call.other;
          co_await made;
        }
        break;
      }
    }
    recycle(std::move(parcel));
    if (end_ack_) co_return;
    if (sched_ready_ && server_box_.empty()) {
      if (!outbox_.empty()) {
        co_await engine_.create(master_, send_to_scheduler(false));
      } else if (simulation_finished() && !end_sent_) {
        append(SimulationEnds{});
        co_await engine_.create(master_, send_to_scheduler(true));
        end_sent_ = true;
      }
    }
  }
}

// Batsim's generate_and_send_message: the message is what the outbox holds now, stamped now.
kernel::Body Simulation::send_to_scheduler(bool is_end) {
  Message msg{instant(engine_.now()).to_micros(), std::move(outbox_), {}};
  outbox_.clear();
  sched_ready_ = false;
  return request_reply(std::move(msg), is_end);
}

std::unique_ptr<Ip> Simulation::make_ip(Ip::Type t) {
  if (spare_ips_.empty()) return std::make_unique<Ip>(t);
  std::unique_ptr<Ip> m = std::move(spare_ips_.back());
  spare_ips_.pop_back();
  m->type = t;
  return m;
}

void Simulation::recycle(std::unique_ptr<kernel::Parcel> p) {
  std::unique_ptr<Ip> m(static_cast<Ip*>(p.release()));
  m->jobs.clear();
  m->ids.clear();
  m->progress.clear();
  if (spare_ips_.size() < 64) spare_ips_.push_back(std::move(m));
}

bool Simulation::simulation_finished() const {
  return submitters_done_ == 1 && nb_completed_ == nb_submitted_ && nb_running_ == 0 && nb_waiters_ == 0 &&
         nb_killers_ == 0;
}

std::string Simulation::decide(const Payload& what, std::optional<kernel::Body>& create, int& host) {
  if (const auto* e = std::get_if<ExecuteJob>(&what)) return decide_execute(*e, create, host);
  if (const auto* r = std::get_if<RejectJob>(&what)) return decide_reject(*r);
  if (const auto* k = std::get_if<KillJob>(&what)) return decide_kill(*k, create);
  const auto& c = std::get<CallMeLater>(what);
  double target = seconds_of(c.target);
  if (target <= engine_.now())
    return "requested time " + format_seconds(c.target) + " is not after the current simulated time " +
           format_seconds_6(instant(engine_.now())) + " (real Batsim aborts on this)";
  ++nb_waiters_;
  create.emplace(waiter(target));
  return {};
}

std::string Simulation::decide_execute(const ExecuteJob& e, std::optional<kernel::Body>& create, int& host) {
  for (const auto& [key, value] : e.extras)
    if (key == "mapping" || key == "storage_mapping" || key == "additional_io_job")
      return "field 'data." + key + "' is not supported by vtime sim (executors run one per allocated "
             "resource, in resource order; use --batsim with real Batsim for custom mappings)";
  auto j = find_job(e.job_id);
  if (!j) return "job '" + e.job_id + "' does not exist in the workload";
  switch (phase_[*j]) {
    case Phase::not_submitted:
      return "job '" + e.job_id + "' has not been submitted yet (it is submitted at " +
             format_seconds(source_.subtime(static_cast<uint32_t>(*j))) + ")";
    case Phase::running:
      return "job '" + e.job_id + "' was already executed (started at " +
             format_seconds_6(live_.at(*j).start) + "); a job can be executed only once";
    case Phase::finished:
      return "job '" + e.job_id + "' was already executed (it has ended); a job can be executed only once";
    case Phase::rejected: return "job '" + e.job_id + "' was rejected, it cannot be executed";
    case Phase::submitted: break;
  }
  const LiveJob& wj = live_.at(*j).job;
  if (e.alloc.size() != static_cast<size_t>(wj.res))
    return "allocation '" + e.alloc.to_string() + "' has " + std::to_string(e.alloc.size()) + " resource" +
           (e.alloc.size() == 1 ? "" : "s") + " but job '" + e.job_id + "' requested " + std::to_string(wj.res);
  for (int id : e.alloc.ids()) {
    if (static_cast<size_t>(id) >= platform_.machines.size())
      return "resource " + std::to_string(id) + " does not exist (the platform has resources 0-" +
             std::to_string(platform_.machines.size() - 1) + ")";
    if (!platform_.is_compute(id)) return "resource " + std::to_string(id) + " is a storage resource, not a compute resource";
    int64_t busy = machines_[static_cast<size_t>(id)].job;
    if (busy >= 0)
      return "resource " + std::to_string(id) + " is already computing job '" + full_id(static_cast<size_t>(busy)) +
             "' and compute sharing is disabled";
  }
  phase_[*j] = Phase::running;
  ++nb_running_;
  JobRun& r = live_.at(*j);
  r.alloc = e.alloc;
  // The job's actor runs on its first (lowest-numbered) resource.
  host = r.alloc.ids().front();
  create.emplace(job(*j));
  just_started_ = *j;
  return {};
}

std::string Simulation::decide_reject(const RejectJob& rj) {
  auto j = find_job(rj.job_id);
  if (!j) return "job '" + rj.job_id + "' does not exist in the workload";
  if (phase_[*j] != Phase::submitted)
    return "job '" + rj.job_id + "' cannot be rejected: only a submitted job that has not been executed can be";
  phase_[*j] = Phase::rejected;
  ++nb_completed_;
  record_rejected(*j);
  return {};
}

std::string Simulation::decide_kill(const KillJob& k, std::optional<kernel::Body>& create) {
  std::vector<std::string> ids;
  std::vector<size_t> slots;
  for (const auto& id : k.job_ids) {
    auto j = find_job(id);
    if (!j) return "job '" + id + "' does not exist in the workload";
    Phase ph = phase_[*j];
    if (ph != Phase::running && ph != Phase::finished)
      return "job '" + id + "' cannot be killed: it has not been started";
    // Batsim discards the jobs whose kill was already requested (and remembers it only while
    // it holds the job: a finished job is forgotten once its row is written).
    auto it = live_.find(*j);
    if (it != live_.end()) {
      if (it->second.kill_requested) continue;
      it->second.kill_requested = true;
    }
    ids.push_back(id);
    slots.push_back(*j);
  }
  if (ids.empty()) return {};
  ++nb_killers_;
  create.emplace(killer(std::move(ids), std::move(slots)));
  return {};
}

}  // namespace vtime::sim::detail
