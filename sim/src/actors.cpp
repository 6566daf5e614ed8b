// Batsim's actors besides the server (Batsim 4.2.1: job_submitter.cpp, network.cpp,
// jobs_execution.cpp), step for step: where each one sleeps, sends or creates decides the
// order and the time of everything the scheduler sees.
#include "simulation.h"

namespace vtime::sim::detail {

namespace {
// Batsim's waiter never sleeps less than this ("found on trial-error", jobs_execution.cpp).
constexpr double kMinWait = 1e-5;
}  // namespace

// static_job_submitter_process: hello, then every batch of jobs at its submission time, then bye.
// The sleep is measured from the last wake-up, not from the end of the last send, so that each
// submission reaches the server one route later than its time.
kernel::Body Simulation::submitter() {
  co_await tell_server(Ip::submitter_hello);
  long double current = engine_.now();  // Batsim's current_submission_date
  while (auto t = source_.next_subtime()) {
    long double at = seconds_of(*t);
    if (at > current) {
      co_await engine_.sleep_for(static_cast<double>(at - current));
      current = engine_.now();
    }
    auto batch = source_.next_batch();
    if (!batch) {
      fail(Outcome::input_failed, batch.error());
      co_return;
    }
    auto m = make_ip(Ip::job_submitted);
    m->jobs = std::move(*batch);
    co_await tell_server(std::move(m));
  }
  co_await tell_server(Ip::submitter_bye);
}

// request_reply_scheduler_process + JsonProtocolReader: the exchange with the scheduler (time
// stands still), then each decision goes to the server at its own timestamp (sleeping until then
// if it is later), then SCHED_READY at the reply's `now`.
kernel::Body Simulation::request_reply(Message message, bool is_end) {
  pending_end_ = is_end;
  // The engine only stops the world; the message waits here for next_message().
  outgoing_ = std::move(message);
  co_await engine_.exchange({});
  // answer() has parsed and checked the reply; the message it answered names the errors.
  Message reply = std::move(*reply_);
  reply_.reset();
  const long seq = pending_seq_;
  const double message_now = pending_now_;
  for (size_t i = 0; i < reply.events.size(); ++i) {
    Event& ev = reply.events[i];
    double when = seconds_of(ev.timestamp);
    if (when > engine_.now()) co_await engine_.sleep_for(when - engine_.now());
    auto m = make_ip(Ip::decision);
    m->message = seq;
    m->message_now = message_now;
    m->event = i;
    m->what = std::move(ev.payload);
    co_await tell_server(std::move(m));
  }
  double now = seconds_of(reply.now);
  if (now > engine_.now()) co_await engine_.sleep_for(now - engine_.now());
  co_await tell_server(Ip::sched_ready);
}

// execute_job_process: runs the job's profile on its allocation, then tells the server (from the
// job's first host) unless it was killed.
kernel::Body Simulation::job(size_t j) {
  JobRun& r = live_.at(j);
  job_started(j, engine_.now());
  const auto& profiles = workload_.profiles;
  // Batsim's remaining walltime, shared by all the steps of a composed profile (-1: none).
  double left = r.job.walltime ? seconds_of(*r.job.walltime) : -1.0;
  // The composed profiles the current leaf is in, outermost first, with their step.
  auto descend = [&](uint32_t p) {
    while (profiles[p].type == "composed") {
      r.at.within.emplace_back(p, 0);
      p = profiles[p].seq.front();
    }
    return p;
  };
  r.at.within.clear();
  uint32_t leaf = descend(r.job.profile);
  int rc = 0;
  for (;;) {
    const Profile& prof = profiles[leaf];
    r.at.leaf = leaf;
    r.at.leaf_start = engine_.now();
    if (prof.type == "delay") {
      // do_delay_task: the whole delay only when strictly below the remaining walltime.
      double d = seconds_of(prof.delay);
      r.at.leaf_length = d;
      r.computing = false;
      if (left < 0 || d < left) {
        co_await engine_.sleep_for(d);
        if (left > 0) left = left - d;
        rc = prof.return_code;
      } else {
        co_await engine_.sleep_for(left);
        left = 0;
        rc = -1;
      }
    } else {
      // A parallel task alone on its hosts (no communication), cut at the remaining walltime;
      // a tie goes to the computation.
      std::optional<double> rate = compute_rate(prof, r.alloc);
      r.at.leaf_length = 0;
      r.computing = true;
      double t0 = engine_.now();
      std::optional<double> timeout;
      if (left >= 0) timeout = left;
      kernel::Actor::Outcome o = co_await engine_.exec(rate.value_or(1.0), !rate, timeout);
      r.computing = false;
      if (o == kernel::Actor::Outcome::cancelled) rc = -2;
      else if (o == kernel::Actor::Outcome::timed_out) rc = -1;
      else rc = prof.return_code;
      if (left >= 0) left = left - (engine_.now() - t0);
    }
    if (rc != 0) break;
    // Next step of the innermost composed profile, or up when it is done (its own "ret").
    bool more = false;
    while (!r.at.within.empty()) {
      auto& [p, step] = r.at.within.back();
      const Profile& cp = profiles[p];
      if (++step < cp.repeat * cp.seq.size()) {
        leaf = descend(cp.seq[step % cp.seq.size()]);
        more = true;
        break;
      }
      r.at.within.pop_back();
      rc = cp.return_code;
      if (rc != 0) break;
    }
    if (!more || rc != 0) break;
  }
  r.return_code = rc;
  r.state = rc == 0   ? JobState::completed_successfully
            : rc > 0  ? JobState::completed_failed
            : rc == -1 ? JobState::completed_walltime_reached
                       : JobState::completed_killed;
  r.actor = nullptr;
  job_ended(j, engine_.now());
  if (r.state == JobState::completed_killed) co_return;  // the killer's KILLING_DONE reports it
  auto m = make_ip(Ip::job_completed);
  m->slot = j;
  co_await tell_server(std::move(m));
}

// waiter_process: REQUESTED_CALL one route after the requested time.
kernel::Body Simulation::waiter(double target) {
  double now = engine_.now();
  if (now < target) co_await engine_.sleep_for(std::max(target - now, kMinWait));
  if (!end_sent_ && !end_ack_) co_await tell_server(Ip::waiting_done);
}

// killer_process: for each running job, its progress, then a cancelled computation (the job's
// actor ends the job) or a killed actor (the killer ends it); then KILLING_DONE.
kernel::Body Simulation::killer(std::vector<std::string> ids, std::vector<size_t> slots) {
  std::vector<JobProgress> progress;
  for (size_t k = 0; k < slots.size(); ++k) {
    size_t j = slots[k];
    auto it = live_.find(j);
    if (it == live_.end() || phase_[j] != Phase::running || !it->second.actor) continue;
    JobRun& r = it->second;
    const auto& profiles = workload_.profiles;
    JobProgress p;
    p.job_id = ids[k];
    p.profile_name = profiles[r.at.leaf].name;
    // Batsim's compute_job_progress: a computation's done fraction, or the delay's elapsed part.
    if (r.computing) p.progress = r.actor->exec ? 1.0 - r.actor->exec->remains : 1.0;
    else p.progress = (engine_.now() - r.at.leaf_start) / r.at.leaf_length;
    for (const auto& [cp, step] : r.at.within) p.within.push_back({profiles[cp].name, static_cast<int>(step)});
    progress.push_back(std::move(p));
    if (r.computing) {
      co_await engine_.cancel(r.actor);
    } else {
      kernel::Actor* victim = r.actor;
      r.actor = nullptr;
      co_await engine_.kill(victim);
      r.state = JobState::completed_killed;
      job_ended(j, engine_.now());
    }
  }
  auto m = make_ip(Ip::killing_done);
  m->ids = std::move(ids);
  m->progress = std::move(progress);
  co_await tell_server(std::move(m));
}

}  // namespace vtime::sim::detail
