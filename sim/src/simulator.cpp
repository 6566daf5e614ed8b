// The conversation with the scheduler (Stepper) and the books of the run: jobs, machines,
// outputs. Batsim's actors are in actors.cpp and server.cpp, the kernel that schedules them in
// kernel.cpp; see simulation.h.
#include "vtime/sim/simulator.h"

#include <algorithm>
#include <chrono>

#include "simulation.h"
#include "vtime/protocol/codec.h"

namespace vtime::sim {

namespace detail {

namespace {
// Batsim puts 10 us instead of a null runtime in its outputs.
const SimTime kNullRuntime = SimTime::from_nanos(Nanos::from_ns(10'000));
}  // namespace

Simulation::Simulation(const Platform& p, JobSource& source, Outputs& o)
    : platform_(p), source_(source), workload_(source.info()), outputs_(o),
      engine_([&p](int src, int dst) {
        (void)dst;  // every internal message goes to the server, on the master host
        const Route& r = src < 0 ? p.master_route : p.machines[static_cast<size_t>(src)].to_master;
        return kernel::Transfer{r.latency, r.rate, r.links};
      }),
      master_(-1), phase_(source.size(), Phase::not_submitted), machines_(p.machines.size()) {}

Simulation::~Simulation() = default;

std::optional<size_t> Simulation::find_job(const std::string& id) const {
  const std::string& w = workload_.name;
  if (id.size() <= w.size() || id.compare(0, w.size(), w) != 0 || id[w.size()] != '!') return std::nullopt;
  auto slot = source_.slot(std::string_view(id).substr(w.size() + 1));
  if (!slot) return std::nullopt;
  return *slot;
}

std::optional<double> Simulation::compute_rate(const Profile& p, const ResourceSet& alloc) const {
  // SimGrid's ptask_L07, one executor per allocated host in resource order, no communication:
  // the task's rate is bounded by each host's speed / its flops (L07Action::calculate_cpu_bound).
  std::vector<int> hosts = alloc.ids();
  std::optional<double> rate;
  for (size_t i = 0; i < hosts.size(); ++i) {
    double flops = p.type == "parallel" ? p.cpu[i]
                   : p.type == "parallel_homogeneous_total" ? p.cpu[0] / static_cast<double>(hosts.size())
                                                            : p.cpu[0];
    if (!(flops > 0)) continue;
    double r = platform_.machines[static_cast<size_t>(hosts[i])].speed * 1.0 / flops;
    rate = rate ? std::min(*rate, r) : r;
  }
  return rate;
}

// ---- jobs and machines -------------------------------------------------------------------

void Simulation::job_started(size_t j, double now) {
  SimTime t = instant(now);
  JobRun& r = live_.at(j);
  r.start = t;
  for (int id : r.alloc.ids()) {
    MachineRun& m = machines_[static_cast<size_t>(id)];
    m.idle += t - m.since;
    m.since = t;
    m.job = static_cast<int64_t>(j);
  }
}

void Simulation::job_ended(size_t j, double now) {
  SimTime t = instant(now);
  JobRun& r = live_.at(j);
  phase_[j] = Phase::finished;
  r.end = t;
  for (int id : r.alloc.ids()) {
    MachineRun& m = machines_[static_cast<size_t>(id)];
    m.computing += t - m.since;
    m.since = t;
    m.job = -1;
  }
}

JobRow Simulation::row_of(size_t j, const LiveJob& wj) const {
  const uint32_t slot = static_cast<uint32_t>(j);
  std::optional<SimTime> walltime;
  if (wj.walltime) walltime = SimTime::from_nanos(*wj.walltime);
  return JobRow{std::string(source_.name(slot)), workload_.name, workload_.profiles[wj.profile].name,
                SimTime::from_nanos(source_.subtime(slot)), wj.res, walltime, std::nullopt};
}

void Simulation::record(size_t j) {
  auto it = live_.find(j);
  const JobRun& r = it->second;
  JobRow row = row_of(j, r.job);
  const SimTime subtime = row.submission;
  SimTime runtime = r.end - r.start;
  if (runtime == SimTime::zero()) runtime = kNullRuntime;
  std::string state(to_string(r.state));
  bool success = r.state == JobState::completed_successfully;
  row.run = JobRow::Run{state, success, r.start, runtime, r.alloc.to_string()};
  // Batsim's aggregates, summed as jobs end.
  ScheduleStats& s = stats_;
  ++s.nb_finished;
  SimTime finish_time = r.start + runtime;
  long double waiting = (r.start - subtime).seconds();
  long double turnaround = (finish_time - subtime).seconds();
  long double slowdown = turnaround / runtime.seconds();
  s.sum_waiting += waiting;
  s.sum_turnaround += turnaround;
  s.sum_slowdown += slowdown;
  s.max_waiting = std::max(s.max_waiting, waiting);
  s.max_turnaround = std::max(s.max_turnaround, turnaround);
  s.max_slowdown = std::max(s.max_slowdown, slowdown);
  s.makespan = std::max(s.makespan, finish_time);
  outputs_.job_done(row);
  // Batsim counts walltime-reached jobs as killed.
  if (success) ++s.nb_success;
  if (r.state == JobState::completed_walltime_reached || r.state == JobState::completed_killed) ++s.nb_killed;
  live_.erase(it);
}

void Simulation::record_rejected(size_t j) {
  auto it = live_.find(j);
  ++stats_.nb_rejected;
  outputs_.job_done(row_of(j, it->second.job));
  live_.erase(it);
}

// ---- the conversation --------------------------------------------------------------------

std::optional<std::string> Simulation::next() {
  std::optional<Message> m = next_message();
  if (!m) return std::nullopt;
  return serialise(*m);
}

std::optional<Message> Simulation::next_message() {
  if (ended_) return std::nullopt;
  if (!started_) {
    started_ = true;
    // Batsim starts the server, then the workload's submitter, both on the master host.
    engine_.start(master_, server());
    engine_.start(master_, submitter());
  }
  std::optional<std::string> stop = engine_.run();
  if (ended_) return std::nullopt;
  if (!stop) {
    if (!end_ack_) {
      // Nothing can happen any more, and the scheduler has left jobs waiting.
      std::vector<size_t> waiting;  // in file order
      for (const auto& [j, r] : live_)
        if (phase_[j] == Phase::submitted) waiting.push_back(j);
      std::sort(waiting.begin(), waiting.end());
      std::string list;
      for (size_t i = 0; i < waiting.size() && i < 5; ++i) list += (i ? ", " : "") + full_id(waiting[i]);
      if (waiting.size() > 5) list += ", ...";
      fail(Outcome::stalled, "simulation stalled at " + format_seconds_6(instant(engine_.now())) + ": " +
                                 std::to_string(waiting.size()) + " submitted job(s) were neither executed nor rejected (" +
                                 list + ") and no CALL_ME_LATER is pending, so nothing can happen any more");
      return std::nullopt;
    }
    report_.outcome = Outcome::completed;
    finish();
    return std::nullopt;
  }
  long seq = report_.messages++;
  pending_seq_ = seq;
  pending_now_ = engine_.now();
  pending_since_ = std::chrono::steady_clock::now();
  std::optional<Message> m = std::move(outgoing_);
  outgoing_.reset();
  return m;
}

std::string Simulation::context(long seq, double now) {
  return "message " + std::to_string(seq) + " (now=" + format_seconds_6(instant(now)) + ")";
}

void Simulation::answer(const std::string& reply) { take_reply(parse_message(reply, Direction::to_batsim)); }

void Simulation::answer_message(Message reply) { take_reply(std::move(reply)); }

void Simulation::take_reply(Result<Message> parsed) {
  waiting_for_scheduler_ += std::chrono::steady_clock::now() - pending_since_;
  auto refuse = [&](const std::string& why) {
    fail(Outcome::invalid_reply, "invalid reply to " + context(pending_seq_, pending_now_) + ": " + why);
  };
  if (!parsed) return refuse(parsed.error());
  Message& reply = *parsed;
  for (size_t i = 0; i < reply.events.size(); ++i) {
    const Event& ev = reply.events[i];
    auto where = [&] { return "event " + std::to_string(i) + " (" + std::string(type_name(ev.payload)) + "): "; };
    // What parse_message checks of a reply's text, for a reply handed over as it is.
    if (ev.timestamp > reply.now)
      return refuse(where() + "timestamp " + format_seconds(ev.timestamp) + " is later than the message's now " +
                    format_seconds(reply.now) + " (Batsim requires timestamp <= now)");
    if (pending_end_)
      return refuse(where() + "the reply to SIMULATION_ENDS must carry no event" +
                    (std::holds_alternative<CallMeLater>(ev.payload) ? " (real Batsim aborts on a CALL_ME_LATER here)" : ""));
    std::string err = std::visit(
        [&](const auto& p) -> std::string {
          using T = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<T, ExecuteJob> || std::is_same_v<T, RejectJob> ||
                        std::is_same_v<T, KillJob> || std::is_same_v<T, CallMeLater>) {
            return {};
          } else if constexpr (std::is_same_v<T, Notify>) {
            return "NOTIFY '" + p.type + "' needs dynamic job registration, which vtime sim does not support";
          } else {
            return "this event type is not supported by vtime sim (use --batsim with real Batsim)";
          }
        },
        ev.payload);
    if (!err.empty()) return refuse(where() + err);
  }
  reply_ = std::move(reply);  // the request-reply actor takes it at the next run()
}

void Simulation::abandon(const PeerStatus& st) {
  const std::string pending = context(pending_seq_, pending_now_);
  waiting_for_scheduler_ += std::chrono::steady_clock::now() - pending_since_;
  if (st.kind == PeerStatus::interrupted) {
    report_.signal = st.signal;
    fail(Outcome::interrupted, "interrupted by signal " + std::to_string(st.signal) +
                                   " while waiting for the reply to " + pending);
  } else {
    fail(Outcome::peer_failed, "communication with the scheduler failed at " + pending + ": " + st.error);
  }
}

void Simulation::fail(Outcome o, std::string error) {
  if (ended_) return;
  report_.outcome = o;
  report_.error = std::move(error);
  engine_.halt();
  finish();
}

SimulationBegins Simulation::begins() const {
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
  return b;
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
  s.simulation_seconds = std::chrono::duration_cast<fsec>(std::chrono::steady_clock::now() - started_at_).count();
  if (!outputs_.write_schedule(s) && report_.outcome == Outcome::completed) {
    report_.outcome = Outcome::output_failed;
    report_.error = outputs_.error();
  }
  report_.end_time = instant(engine_.now()).to_nanos();
}

}  // namespace detail

struct Stepper::Impl {
  Impl(const Platform& p, JobSource& w, Outputs& o) : sim(p, w, o) {}
  detail::Simulation sim;
};

Stepper::Stepper(const Platform& platform, JobSource& workload, Outputs& outputs)
    : impl_(std::make_unique<Impl>(platform, workload, outputs)) {}
Stepper::~Stepper() = default;
std::optional<std::string> Stepper::next() { return impl_->sim.next(); }
void Stepper::answer(const std::string& reply) { impl_->sim.answer(reply); }
std::optional<protocol::Message> Stepper::next_message() { return impl_->sim.next_message(); }
void Stepper::answer_message(protocol::Message reply) { impl_->sim.answer_message(std::move(reply)); }
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
