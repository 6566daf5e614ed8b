// The simulation core: a timer queue ordered by (time, arming order), jobs, machines, and the
// validation of the scheduler's decisions. See simulator.h for the timing model.
#include "vtime/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

#include "vtime/protocol/codec.h"

namespace vtime::sim {

using namespace vtime::protocol;

namespace {

enum class Phase : uint8_t { not_submitted, submitted, running, finished, rejected };

// A job between its submission and its end: all the simulator holds per job, besides its phase.
// What is kept of a submitted job's description: its JSON went out with JOB_SUBMITTED, and its id
// and submission time are in the source's index (JobSource::name, subtime). A scheduler with a
// backlog holds hundreds of thousands of these (issue 14: 1 M jobs, 293,000 waiting at once).
struct LiveJob {
  std::optional<Nanos> walltime;
  int res = 1;
  uint32_t profile = 0;  // index in Workload::profiles
};

struct JobRun {
  LiveJob job;
  Nanos start;
  ResourceSet alloc;
  uint64_t end_seq = 0;  // key of its job_end timer while running
  Nanos end_time;
};

// One armed timer. `seq` is the arming order: SimGrid wakes actors sleeping until the same
// instant in the order they went to sleep.
enum class TimerKind { submit, job_end, requested_call, no_more_jobs, job_killed };
struct Timer {
  Nanos time;
  uint64_t seq;
  TimerKind kind;
  size_t index;  // job_end: job slot; job_killed: payload
  bool operator<(const Timer& o) const { return time != o.time ? time < o.time : seq < o.seq; }
};

struct MachineRun {
  int64_t job = -1;  // running job's slot
  Nanos since;      // last state change
  Nanos idle, computing;
};

// Batsim puts 10 us instead of a null runtime in its outputs.
constexpr Nanos kNullRuntime = Nanos::from_ns(10'000);

class Simulation {
 public:
  // Batsim submits in (subtime, job id) order, all jobs of one subtime at once: the source's
  // batches. Only submitted jobs that have not ended are held (live_).
  Simulation(const Platform& p, JobSource& source, Outputs& o)
      : platform_(p), source_(source), workload_(source.info()), outputs_(o),
        phase_(source.size(), Phase::not_submitted), machines_(p.machines.size()) {}

  // The conversation, driven from outside (Stepper): the next message to the scheduler (nullopt
  // once the run has ended), then exactly one of answer() (its reply) or abandon() (none came).
  std::optional<std::string> next();
  void answer(const std::string& reply);
  void abandon(const PeerStatus& st);
  bool ended() const { return ended_; }
  const RunReport& report() const { return report_; }

 private:
  // ---- timers and events
  uint64_t arm(Nanos t, TimerKind k, size_t index) {
    uint64_t s = next_seq_++;
    timers_.insert(Timer{t, s, k, index});
    return s;
  }
  void emit(Payload p) { outbox_.push_back(Event{clock_, std::move(p), {}}); }
  void fire(const Timer& t);
  void advance_to(Nanos t);

  // ---- jobs and machines
  void submit_batch();
  void start_job(size_t j, ResourceSet alloc);
  void end_job(size_t j, JobState state, int return_code);
  void release(const JobRun& r);
  // Writes the job's row, counts it in the statistics, and forgets it.
  void record(size_t j, const std::string& final_state, bool success);

  // ---- the conversation
  std::string send(Message m, bool is_end);  // what next() returns; remembers what answer() needs
  Message begins() const;                    // SIMULATION_BEGINS for the platform and workload
  std::string apply(const Message& reply, bool is_end);
  std::string decide(const ExecuteJob& e);
  std::string decide(const RejectJob& r);
  std::string decide(const KillJob& k);
  std::string decide(const CallMeLater& c);
  std::string full_id(size_t slot) const {
    return workload_.name + "!" + std::string(source_.name(static_cast<uint32_t>(slot)));
  }
  // The slot of a full job id ("w0!12"), if the workload has it.
  std::optional<size_t> find_job(const std::string& id) const {
    const std::string& w = workload_.name;
    if (id.size() <= w.size() || id.compare(0, w.size(), w) != 0 || id[w.size()] != '!') return std::nullopt;
    auto slot = source_.slot(std::string_view(id).substr(w.size() + 1));
    if (!slot) return std::nullopt;
    return *slot;
  }
  void finish();  // writes the schedule and ends the run (once)

  const Platform& platform_;
  JobSource& source_;
  const WorkloadInfo& workload_;
  Outputs& outputs_;
  std::vector<Phase> phase_;               // by slot
  std::unordered_map<size_t, JobRun> live_;  // submitted, not ended, by slot
  std::vector<MachineRun> machines_;
  std::vector<JobKilled> killed_;          // payloads of job_killed timers
  std::string source_error_;               // the workload could not be read again
  ScheduleStats stats_;                    // accumulated as jobs end

  std::set<Timer> timers_;
  uint64_t next_seq_ = 0;
  Nanos clock_;
  std::vector<Event> outbox_;
  bool begun_ = false;  // SIMULATION_BEGINS sent
  bool ended_ = false;
  // The message awaiting its reply.
  bool pending_end_ = false;
  std::string pending_context_;
  std::chrono::steady_clock::time_point pending_since_;
  RunReport report_;
  std::chrono::steady_clock::duration waiting_for_scheduler_{};
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// ---- timers ------------------------------------------------------------------------------

void Simulation::fire(const Timer& t) {
  clock_ = t.time;
  switch (t.kind) {
    case TimerKind::submit: submit_batch(); break;
    case TimerKind::job_end: {
      const LiveJob& wj = live_.at(t.index).job;
      const Profile& prof = workload_.profiles[wj.profile];
      if (wj.walltime && prof.delay >= *wj.walltime) {
        end_job(t.index, JobState::completed_walltime_reached, -1);
      } else {
        int rc = prof.return_code;
        end_job(t.index, rc == 0 ? JobState::completed_successfully
                         : rc > 0 ? JobState::completed_failed
                                  : JobState::completed_walltime_reached, rc);
      }
      break;
    }
    case TimerKind::requested_call: emit(RequestedCall{}); break;
    case TimerKind::no_more_jobs: emit(Notify{"no_more_static_job_to_submit", {}}); break;
    case TimerKind::job_killed: emit(std::move(killed_[t.index])); break;
  }
}

void Simulation::advance_to(Nanos t) {
  while (!timers_.empty() && timers_.begin()->time <= t) {
    Timer first = *timers_.begin();
    timers_.erase(timers_.begin());
    fire(first);
  }
  clock_ = std::max(clock_, t);
}

// ---- jobs and machines -------------------------------------------------------------------

void Simulation::submit_batch() {
  auto batch = source_.next_batch();
  if (!batch) {
    source_error_ = batch.error();
    return;
  }
  for (WorkloadJob& wj : *batch) {
    size_t j = wj.index;
    phase_[j] = Phase::submitted;
    ++stats_.nb_jobs;
    JobSubmitted s;
    s.job_id = wj.id;
    s.job = JobDescription{wj.id, wj.res, wj.subtime, wj.walltime, workload_.profiles[wj.profile].name};
    s.job_json = std::move(wj.json);  // only JOB_SUBMITTED needs it: a job in flight holds less
    emit(std::move(s));
    live_[j].job = LiveJob{wj.walltime, wj.res, static_cast<uint32_t>(wj.profile)};
  }
  // The submitter goes back to sleep now, or announces that it is done.
  if (auto next = source_.next_subtime()) arm(*next, TimerKind::submit, 0);
  else arm(clock_, TimerKind::no_more_jobs, 0);
}

void Simulation::start_job(size_t j, ResourceSet alloc) {
  JobRun& r = live_.at(j);
  const LiveJob& wj = r.job;
  Nanos delay = workload_.profiles[wj.profile].delay;
  // Batsim's delay task: sleeps the whole delay only if it is strictly below the walltime.
  Nanos run_for = (wj.walltime && delay >= *wj.walltime) ? *wj.walltime : delay;
  phase_[j] = Phase::running;
  r.start = clock_;
  r.end_time = clock_ + run_for;
  for (int id : alloc.ids()) {
    MachineRun& m = machines_[static_cast<size_t>(id)];
    m.idle += clock_ - m.since;
    m.since = clock_;
    m.job = static_cast<int64_t>(j);
  }
  r.alloc = std::move(alloc);
  r.end_seq = arm(r.end_time, TimerKind::job_end, j);
}

void Simulation::release(const JobRun& r) {
  for (int id : r.alloc.ids()) {
    MachineRun& m = machines_[static_cast<size_t>(id)];
    m.computing += clock_ - m.since;
    m.since = clock_;
    m.job = -1;
  }
}

void Simulation::record(size_t j, const std::string& final_state, bool success) {
  auto it = live_.find(j);
  const JobRun& r = it->second;
  const LiveJob& wj = r.job;
  const uint32_t slot = static_cast<uint32_t>(j);
  const Nanos subtime = source_.subtime(slot);
  JobRow row{std::string(source_.name(slot)), workload_.name, workload_.profiles[wj.profile].name, subtime, wj.res,
             wj.walltime, std::nullopt};
  if (phase_[j] == Phase::finished) {
    Nanos runtime = r.end_time - r.start;
    if (runtime == Nanos::zero()) runtime = kNullRuntime;
    row.run = JobRow::Run{final_state, success, r.start, runtime, r.alloc.to_string()};
    // Batsim's aggregates, summed as jobs end.
    ScheduleStats& s = stats_;
    ++s.nb_finished;
    Nanos finish_time = r.start + runtime;
    long double waiting = static_cast<long double>((r.start - subtime).ns()) / 1e9L;
    long double turnaround = static_cast<long double>((finish_time - subtime).ns()) / 1e9L;
    long double slowdown = turnaround / (static_cast<long double>(runtime.ns()) / 1e9L);
    s.sum_waiting += waiting;
    s.sum_turnaround += turnaround;
    s.sum_slowdown += slowdown;
    s.max_waiting = std::max(s.max_waiting, waiting);
    s.max_turnaround = std::max(s.max_turnaround, turnaround);
    s.max_slowdown = std::max(s.max_slowdown, slowdown);
    s.makespan = std::max(s.makespan, finish_time);
  } else {
    ++stats_.nb_rejected;
  }
  outputs_.job_done(row);
  // Batsim counts walltime-reached jobs as killed.
  if (success) ++stats_.nb_success;
  if (final_state == "COMPLETED_WALLTIME_REACHED" || final_state == "COMPLETED_KILLED") ++stats_.nb_killed;
  live_.erase(it);
}

void Simulation::end_job(size_t j, JobState state, int return_code) {
  JobRun& r = live_.at(j);
  phase_[j] = Phase::finished;
  r.end_time = clock_;
  release(r);
  JobCompleted done{full_id(j), state, return_code, r.alloc, {}};
  record(j, std::string(to_string(state)), state == JobState::completed_successfully);
  emit(std::move(done));
}

// ---- decisions ---------------------------------------------------------------------------

std::string Simulation::decide(const ExecuteJob& e) {
  for (const auto& [key, value] : e.extras)
    if (key == "mapping" || key == "storage_mapping" || key == "additional_io_job")
      return "field 'data." + key + "' is not supported by vtime sim (it only matters for SimGrid's "
             "parallel-task models; delay jobs use the allocation as given)";
  auto j = find_job(e.job_id);
  if (!j) return "job '" + e.job_id + "' does not exist in the workload";
  switch (phase_[*j]) {
    case Phase::not_submitted:
      return "job '" + e.job_id + "' has not been submitted yet (it is submitted at " +
             format_seconds(source_.subtime(static_cast<uint32_t>(*j))) + ")";
    case Phase::running:
      return "job '" + e.job_id + "' was already executed (started at " + format_seconds(live_.at(*j).start) +
             "); a job can be executed only once";
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
  start_job(*j, e.alloc);
  return {};
}

std::string Simulation::decide(const RejectJob& rj) {
  auto j = find_job(rj.job_id);
  if (!j) return "job '" + rj.job_id + "' does not exist in the workload";
  if (phase_[*j] != Phase::submitted)
    return "job '" + rj.job_id + "' cannot be rejected: only a submitted job that has not been executed can be";
  phase_[*j] = Phase::rejected;
  record(*j, "REJECTED", false);
  return {};
}

std::string Simulation::decide(const KillJob& k) {
  std::vector<JobProgress> progress;
  for (const auto& id : k.job_ids) {
    auto j = find_job(id);
    if (!j) return "job '" + id + "' does not exist in the workload";
    Phase ph = phase_[*j];
    if (ph != Phase::running && ph != Phase::finished)
      return "job '" + id + "' cannot be killed: it has not been started";
  }
  for (const auto& id : k.job_ids) {
    size_t j = *find_job(id);
    if (phase_[j] != Phase::running) continue;  // already finished: Batsim acknowledges it anyway
    JobRun& r = live_.at(j);
    const Profile& prof = workload_.profiles[r.job.profile];
    double done = prof.delay > Nanos::zero()
                      ? static_cast<double>((clock_ - r.start).ns()) / static_cast<double>(prof.delay.ns())
                      : 1.0;
    progress.push_back(JobProgress{id, prof.name, done});
    timers_.erase(Timer{r.end_time, r.end_seq, TimerKind::job_end, j});
    phase_[j] = Phase::finished;
    r.end_time = clock_;
    release(r);
    record(j, "COMPLETED_KILLED", false);
  }
  // The acknowledgement comes in the next message (Batsim's killer runs as its own actor).
  killed_.push_back(JobKilled{k.job_ids, job_progress_json(progress), {}});
  arm(clock_, TimerKind::job_killed, killed_.size() - 1);
  return {};
}

std::string Simulation::decide(const CallMeLater& c) {
  if (c.target <= clock_)
    return "requested time " + format_seconds(c.target) + " is not after the current simulated time " +
           format_seconds(clock_) + " (real Batsim aborts on this)";
  arm(c.target, TimerKind::requested_call, 0);
  return {};
}

// ---- the conversation --------------------------------------------------------------------

std::string Simulation::apply(const Message& reply, bool is_end) {
  for (size_t i = 0; i < reply.events.size(); ++i) {
    const Event& ev = reply.events[i];
    std::string where = "event " + std::to_string(i) + " (" + std::string(type_name(ev.payload)) + "): ";
    if (is_end)
      return where + "the reply to SIMULATION_ENDS must carry no event" +
             (std::holds_alternative<CallMeLater>(ev.payload) ? " (real Batsim aborts on a CALL_ME_LATER here)" : "");
    // Batsim applies each decision at its own timestamp when that is later than its clock.
    if (ev.timestamp > clock_) advance_to(ev.timestamp);
    std::string err = std::visit(
        [&](const auto& p) -> std::string {
          using T = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<T, ExecuteJob> || std::is_same_v<T, RejectJob> ||
                        std::is_same_v<T, KillJob> || std::is_same_v<T, CallMeLater>) {
            return decide(p);
          } else if constexpr (std::is_same_v<T, Notify>) {
            return "NOTIFY '" + p.type + "' needs dynamic job registration, which vtime sim does not support";
          } else {
            return "this event type is not supported by vtime sim (delay jobs only; use real Batsim)";
          }
        },
        ev.payload);
    if (!err.empty()) return where + err;
  }
  // A later `now` is decision time: the clock moves on while the scheduler "thinks". An earlier
  // one is ignored, as real Batsim does.
  if (reply.now > clock_) advance_to(reply.now);
  return {};
}

std::string Simulation::send(Message m, bool is_end) {
  long seq = report_.messages++;
  pending_end_ = is_end;
  pending_context_ = "message " + std::to_string(seq) + " (now=" + format_seconds(m.now) + ")";
  pending_since_ = std::chrono::steady_clock::now();
  return serialise(m);
}

void Simulation::abandon(const PeerStatus& st) {
  waiting_for_scheduler_ += std::chrono::steady_clock::now() - pending_since_;
  if (st.kind == PeerStatus::interrupted) {
    report_.outcome = Outcome::interrupted;
    report_.signal = st.signal;
    report_.error = "interrupted by signal " + std::to_string(st.signal) + " while waiting for the reply to " +
                    pending_context_;
  } else {
    report_.outcome = Outcome::peer_failed;
    report_.error = "communication with the scheduler failed at " + pending_context_ + ": " + st.error;
  }
  finish();
}

void Simulation::answer(const std::string& reply) {
  waiting_for_scheduler_ += std::chrono::steady_clock::now() - pending_since_;
  auto parsed = parse_message(reply, Direction::to_batsim);
  std::string err = parsed ? apply(*parsed, pending_end_) : parsed.error();
  if (!err.empty()) {
    report_.outcome = Outcome::invalid_reply;
    report_.error = "invalid reply to " + pending_context_ + ": " + err;
    finish();
  } else if (pending_end_) {
    report_.outcome = Outcome::completed;
    finish();
  }
}

Message Simulation::begins() const {
  SimulationBegins b;
  int compute = platform_.compute_count();
  b.nb_resources = static_cast<int>(platform_.machines.size());
  b.nb_compute_resources = compute;
  b.nb_storage_resources = b.nb_resources - compute;
  b.config = RawJson{
      R"({"redis-enabled":false,"redis-hostname":"127.0.0.1","redis-port":6379,"redis-prefix":"default",)"
      R"("profiles-forwarded-on-submission":false,"dynamic-jobs-enabled":false,"dynamic-jobs-acknowledged":false,)"
      R"("profile-reuse-enabled":false,"sched-config":"","forward-unknown-events":false})"};
  for (const Machine& mach : platform_.machines) {
    Resource r{mach.id, mach.name, "idle", {{"role", mach.role}}, mach.zone_properties};
    r.properties.insert(r.properties.end(), mach.properties.begin(), mach.properties.end());
    (mach.role.empty() ? b.compute_resources : b.storage_resources).push_back(std::move(r));
  }
  b.workloads = {{workload_.name, workload_.file}};
  // The workload name is a plain identifier ("w0"), so it needs no JSON escaping.
  b.profiles = RawJson{"{\"" + workload_.name + "\":" + workload_.profiles_json.text + "}"};
  return Message{Nanos::zero(), {Event{Nanos::zero(), std::move(b), {}}}, {}};
}

std::optional<std::string> Simulation::next() {
  if (ended_) return std::nullopt;
  if (!begun_) {
    begun_ = true;
    if (auto first = source_.next_subtime()) arm(*first, TimerKind::submit, 0);
    else arm(Nanos::zero(), TimerKind::no_more_jobs, 0);
    return send(begins(), false);
  }
  for (;;) {
    if (!outbox_.empty()) {
      Message m{clock_, std::move(outbox_), {}};
      outbox_.clear();
      return send(std::move(m), false);
    }
    if (timers_.empty()) {
      std::vector<size_t> waiting;  // in file order
      for (const auto& [j, r] : live_)
        if (phase_[j] == Phase::submitted) waiting.push_back(j);
      std::sort(waiting.begin(), waiting.end());
      if (!waiting.empty()) {
        report_.outcome = Outcome::stalled;
        std::string list;
        for (size_t i = 0; i < waiting.size() && i < 5; ++i) list += (i ? ", " : "") + full_id(waiting[i]);
        if (waiting.size() > 5) list += ", ...";
        report_.error = "simulation stalled at " + format_seconds(clock_) + ": " + std::to_string(waiting.size()) +
                        " submitted job(s) were neither executed nor rejected (" + list +
                        ") and no CALL_ME_LATER is pending, so nothing can happen any more";
        finish();
        return std::nullopt;
      }
      return send(Message{clock_, {Event{clock_, SimulationEnds{}, {}}}, {}}, true);
    }
    // One message per instant: every timer armed before this instant began.
    Nanos t = timers_.begin()->time;
    uint64_t barrier = next_seq_;
    while (!timers_.empty() && timers_.begin()->time == t && timers_.begin()->seq < barrier) {
      Timer first = *timers_.begin();
      timers_.erase(timers_.begin());
      fire(first);
    }
    if (!source_error_.empty()) {
      report_.outcome = Outcome::input_failed;
      report_.error = source_error_;
      finish();
      return std::nullopt;
    }
  }
}

void Simulation::finish() {
  if (ended_) return;
  ended_ = true;
  ScheduleStats s = stats_;
  s.nb_computing_machines = platform_.compute_count();
  // Machine time is counted per state change, like Batsim: the time since a machine's last
  // change (trailing idle time) is not counted.
  for (const MachineRun& m : machines_) {
    s.time_idle += m.idle;
    s.time_computing += m.computing;
  }
  using fsec = std::chrono::duration<double>;
  s.scheduling_seconds = std::chrono::duration_cast<fsec>(waiting_for_scheduler_).count();
  s.simulation_seconds = std::chrono::duration_cast<fsec>(std::chrono::steady_clock::now() - started_).count();
  if (!outputs_.write_schedule(s) && report_.outcome == Outcome::completed) {
    report_.outcome = Outcome::output_failed;
    report_.error = outputs_.error();
  }
  report_.end_time = clock_;
}

}  // namespace

struct Stepper::Impl {
  Impl(const Platform& p, JobSource& w, Outputs& o) : sim(p, w, o) {}
  Simulation sim;
};

Stepper::Stepper(const Platform& platform, JobSource& workload, Outputs& outputs)
    : impl_(std::make_unique<Impl>(platform, workload, outputs)) {}
Stepper::~Stepper() = default;
std::optional<std::string> Stepper::next() { return impl_->sim.next(); }
void Stepper::answer(const std::string& reply) { impl_->sim.answer(reply); }
void Stepper::abandon(const PeerStatus& status) { impl_->sim.abandon(status); }
bool Stepper::ended() const { return impl_->sim.ended(); }
const RunReport& Stepper::report() const { return impl_->sim.report(); }

RunReport simulate(const Platform& platform, JobSource& workload, Outputs& outputs, Peer& peer) {
  Stepper sim(platform, workload, outputs);
  std::string reply;
  while (std::optional<std::string> request = sim.next()) {
    PeerStatus st = peer.exchange(*request, reply);
    if (st.kind == PeerStatus::ok) sim.answer(reply);
    else sim.abandon(st);
  }
  return sim.report();
}

RunReport simulate(const Platform& platform, const Workload& workload, Outputs& outputs, Peer& peer) {
  auto source = memory_source(workload);
  return simulate(platform, *source, outputs, peer);
}

int exit_status(const RunReport& r) {
  switch (r.outcome) {
    case Outcome::completed: return 0;
    case Outcome::output_failed:
    case Outcome::input_failed: return 2;
    case Outcome::invalid_reply: return 3;
    case Outcome::stalled: return 4;
    case Outcome::peer_failed: return 5;
    case Outcome::interrupted: return 128 + r.signal;
  }
  return 125;
}

}  // namespace vtime::sim
