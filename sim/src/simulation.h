// Internal to vtime_sim: Batsim 4.2.1's actors on the kernel (kernel.h), with the state they
// share. The file names follow Batsim's: server.cpp holds the server and its handlers (Batsim's
// server.cpp), actors.cpp the others (job_submitter.cpp, network.cpp's request-reply actor,
// jobs_execution.cpp's job, waiter and killer), simulator.cpp the conversation (Stepper) and the
// outputs.
//
// Every message between these actors goes through the server's mailbox and costs the route
// between the sender's host and the master host (Platform::Route), as in real Batsim, where they
// are one-byte SimGrid transfers: that is where a networked platform's delays come from.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel.h"
#include "vtime/protocol/codec.h"
#include "vtime/sim/simulator.h"

namespace vtime::sim::detail {

using namespace vtime::protocol;

enum class Phase : uint8_t { not_submitted, submitted, running, finished, rejected };

// The double Batsim reads for a number of seconds (rapidjson parses the few digits of a workload or
// a reply exactly; Nanos holds them to the nanosecond).
inline double seconds_of(Nanos n) { return static_cast<double>(static_cast<long double>(n.ns()) / 1e9L); }
// An instant of the kernel's clock for the books (outputs, statistics), exactly.
inline SimTime instant(double t) { return SimTime::from_double(t); }

// A job between its submission and its end: what the simulator holds per job besides its phase.
// Its id and submission time are in the source's index (JobSource::name, subtime), its JSON went
// out with JOB_SUBMITTED. A scheduler with a backlog holds hundreds of thousands of these.
struct LiveJob {
  std::optional<Nanos> walltime;
  int res = 1;
  uint32_t profile = 0;  // index in Workload::profiles
};

// The profile a running job is in (for JOB_KILLED's progress): the composed profiles it is
// nested in, with their current step, then the leaf.
struct TaskPoint {
  std::vector<std::pair<uint32_t, uint32_t>> within;  // (composed profile, current_task_index)
  uint32_t leaf = 0;
  double leaf_start = 0;                              // Batsim's delay_task_start
  double leaf_length = 0;                             // delay
};

struct JobRun {
  LiveJob job;
  SimTime start;
  SimTime end;
  ResourceSet alloc;
  kernel::Actor* actor = nullptr;  // its execution actor while it runs
  TaskPoint at;
  bool computing = false;          // in a parallel task (a kill cancels it) rather than a delay
  bool kill_requested = false;
  JobState state = JobState::completed_successfully;
  int return_code = -1;            // Batsim's default, kept by a killed delay job
};

struct MachineRun {
  int64_t job = -1;  // running job's slot
  SimTime since;     // last state change
  SimTime idle, computing;
};

// Batsim's internal messages (ipp.hpp), all sent to the server.
struct Ip : kernel::Parcel {
  enum Type : uint8_t {
    submitter_hello, submitter_bye, job_submitted, job_completed, killing_done, waiting_done,
    sched_ready, decision,  // decision: EXECUTE_JOB, REJECT_JOB, KILL_JOB or CALL_ME_LATER
  };
  explicit Ip(Type t) : type(t) {}
  Type type;
  std::vector<WorkloadJob> jobs;  // job_submitted
  size_t slot = 0;                // job_completed
  Payload what;                   // decision
  // decision: where it came from, for an error message (message 3, its `now`, event 1); the text
  // is built only if the decision is refused.
  long message = 0;
  double message_now = 0;
  size_t event = 0;
  std::vector<std::string> ids;   // killing_done: the jobs the killer was asked to kill
  std::vector<JobProgress> progress;
};

class Simulation {
 public:
  Simulation(const Platform& p, JobSource& source, Outputs& o);
  ~Simulation();

  std::optional<std::string> next();  // next_message(), as text
  void answer(const std::string& reply);  // read, then answer_message
  std::optional<Message> next_message();
  void answer_message(Message reply);
  void abandon(const PeerStatus& st);
  bool ended() const { return ended_; }
  const RunReport& report() const { return report_; }

 private:
  // ---- actors (actors.cpp, server.cpp)
  kernel::Body server();
  kernel::Body submitter();
  kernel::Body request_reply(Message message, bool is_end);
  // A reply as read (answer) or handed over (answer_message): checked, then kept for the
  // request-reply actor, or the run fails with why.
  void take_reply(Result<Message> reply);
  kernel::Body job(size_t slot);
  kernel::Body waiter(double target);
  kernel::Body killer(std::vector<std::string> ids, std::vector<size_t> slots);
  // Sends to the server (one message: the route from this actor's host to the master host).
  kernel::Engine::Await tell_server(Ip::Type t) { return engine_.put(server_box_, make_ip(t)); }
  kernel::Engine::Await tell_server(std::unique_ptr<Ip> m) { return engine_.put(server_box_, std::move(m)); }
  // Internal messages are reused once the server has handled them (one allocation each otherwise).
  std::unique_ptr<Ip> make_ip(Ip::Type t);
  void recycle(std::unique_ptr<kernel::Parcel> p);
  std::vector<std::unique_ptr<Ip>> spare_ips_;

  // ---- the server's state changes (server.cpp)
  // A decision's checks and effect at the server; the error, or "" (then `create` may hold an
  // actor to create: a job, a waiter or a killer, on `host`).
  std::string decide(const Payload& what, std::optional<kernel::Body>& create, int& host);
  std::string decide_execute(const ExecuteJob& e, std::optional<kernel::Body>& create, int& host);
  std::optional<size_t> just_started_;     // the job decide_execute just started (its actor to note)
  std::string decide_reject(const RejectJob& r);
  std::string decide_kill(const KillJob& k, std::optional<kernel::Body>& create);
  bool simulation_finished() const;
  void append(Payload p) { outbox_.push_back(Event{instant(engine_.now()).to_micros(), std::move(p), {}}); }
  kernel::Body send_to_scheduler(bool is_end);  // the request-reply actor for the outbox

  // ---- jobs and machines (simulator.cpp)
  void job_started(size_t j, double t);
  void job_ended(size_t j, double t);
  // Writes the job's row, counts it in the statistics, and forgets it.
  void record(size_t j);
  void record_rejected(size_t j);
  JobRow row_of(size_t j, const LiveJob& wj) const;  // the columns every row has
  std::string full_id(size_t slot) const {
    return workload_.name + "!" + std::string(source_.name(static_cast<uint32_t>(slot)));
  }
  std::optional<size_t> find_job(const std::string& id) const;
  // The rate of a parallel task of profile p on the allocation (ptask_L07: the fraction done per
  // second, its slowest host's speed / flops); nullopt when it has no work at all.
  std::optional<double> compute_rate(const Profile& p, const ResourceSet& alloc) const;

  // ---- the conversation (simulator.cpp)
  SimulationBegins begins() const;
  void fail(Outcome o, std::string error);
  void finish();  // writes the schedule and ends the run (once)

  const Platform& platform_;
  JobSource& source_;
  const WorkloadInfo& workload_;
  Outputs& outputs_;
  kernel::Engine engine_;
  kernel::Mailbox server_box_;
  int master_;                             // the master host's number for the kernel

  std::vector<Phase> phase_;               // by slot
  std::unordered_map<size_t, JobRun> live_;  // submitted, not ended, by slot
  std::vector<MachineRun> machines_;
  ScheduleStats stats_;                    // accumulated as jobs end
  SimTime makespan_;

  // The server's data (Batsim's ServerData).
  std::vector<Event> outbox_;              // Batsim's protocol writer: the next message's events
  bool sched_ready_ = false;
  bool end_sent_ = false, end_ack_ = false;
  int submitters_ = 0, submitters_done_ = 0;
  long nb_submitted_ = 0, nb_completed_ = 0, nb_running_ = 0;
  int nb_waiters_ = 0, nb_killers_ = 0;

  // The conversation.
  bool started_ = false;
  bool ended_ = false;
  long seq_ = 0;                           // messages sent
  long pending_seq_ = 0;                   // the message awaiting its reply, and its `now`
  double pending_now_ = 0;
  // "message 3 (now=10.000600)", for error messages only (built when one is written).
  static std::string context(long seq, double now);
  bool pending_end_ = false;
  std::optional<Message> reply_;           // the parsed reply, for the request-reply actor
  std::optional<Message> outgoing_;        // the request-reply actor's message, for next_message
  RunReport report_;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point pending_since_;
  std::chrono::steady_clock::duration waiting_for_scheduler_{};
};

}  // namespace vtime::sim::detail
