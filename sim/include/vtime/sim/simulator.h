// The embedded Batsim-4.2.1-compatible simulator core: delay jobs on a platform's machines,
// driven by a scheduler through the Batsim protocol (typed events from vtime_protocol; the core
// never sees JSON).
//
// Timing model, matching real Batsim on a no-network platform (the reference transcripts):
// no internal hop (events happen exactly at their time); every event due at the same instant
// goes into one message, ordered by when its timer was armed (SimGrid's order: the submitter's
// next wake-up is armed when it submits, a job's end when it starts, a REQUESTED_CALL when the
// CALL_ME_LATER is read); what an instant's events trigger at that same instant (NOTIFY
// no_more_static_job_to_submit after the last submission, JOB_KILLED, zero-length jobs) goes in
// the next message at the same `now`. A reply's events apply at their own timestamps when those
// are later than the clock; a reply whose `now` is later than the message's advances the clock
// ("decision time"), and what happened meanwhile is sent with its own earlier timestamps.
//
// Example:
//     auto peer = ZmqPeer::connect(endpoint);
//     auto out = Outputs::open("out");
//     auto jobs = open_workload("workload.json", "w0");
//     RunReport r = simulate(platform, **jobs, **out, **peer);
//     if (r.outcome != Outcome::completed) std::fprintf(stderr, "%s\n", r.error.c_str());
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "vtime/sim/outputs.h"
#include "vtime/sim/peer.h"
#include "vtime/sim/platform.h"
#include "vtime/sim/workload.h"

namespace vtime::sim {

enum class Outcome {
  completed,      // SIMULATION_ENDS sent and answered
  invalid_reply,  // the scheduler broke the protocol (real Batsim would abort)
  stalled,        // nothing left to happen but jobs are neither started nor rejected
  interrupted,    // SIGINT/SIGTERM while waiting for the scheduler
  peer_failed,    // ZeroMQ error
  output_failed,  // PREFIX_schedule.csv could not be written
  input_failed,   // the workload file could not be read again during the run (it changed)
};

struct RunReport {
  Outcome outcome = Outcome::completed;
  std::string error;   // one line, empty when completed
  int signal = 0;      // interrupted: which signal
  long messages = 0;   // messages sent to the scheduler
  Nanos end_time;      // simulated time when the run stopped
};

// The simulation driven one message at a time, for a caller that carries the messages itself
// (`vtime run`'s broker calls it from its own thread: no hand-off between threads per message).
// The same messages, byte for byte, as simulate() sends to a Peer.
//     Stepper s(platform, *jobs, *out);
//     while (auto request = s.next()) {
//       std::string reply = ...;          // the scheduler's answer to *request
//       s.answer(reply);                  // or s.abandon(status) when none will come
//     }
//     RunReport r = s.report();           // the outputs are written once next() gave nullopt
class Stepper {
 public:
  Stepper(const Platform& platform, JobSource& workload, Outputs& outputs);
  ~Stepper();
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;

  // The next message to the scheduler; nullopt once the run has ended (report() says how).
  std::optional<std::string> next();
  // The reply to the message next() returned last (exactly one answer() or abandon() each).
  void answer(const std::string& reply);
  // The same without the text between them, for a caller that reads and writes messages itself:
  // next() is serialise(next_message()), answer() parses the text with Batsim's rules for a
  // scheduler's message (Direction::to_batsim), then does what answer_message() does.
  std::optional<protocol::Message> next_message();
  void answer_message(protocol::Message reply);
  // No reply will come (interrupted, the peer failed): the run ends and its outputs are written.
  void abandon(const PeerStatus& status);
  bool ended() const;
  const RunReport& report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads the workload's jobs from `workload` as they are submitted (open_workload: memory bounded
// by the jobs in flight).
RunReport simulate(const Platform& platform, JobSource& workload, Outputs& outputs, Peer& peer);
// The same for a workload held in memory.
RunReport simulate(const Platform& platform, const Workload& workload, Outputs& outputs, Peer& peer);

// `vtime sim`'s exit status for a run (docs/sim.md): 0 completed, 2 an output could not be
// written or the workload not read again, 3 invalid reply, 4 stalled, 5 the peer failed, 128 + N interrupted by signal N.
int exit_status(const RunReport& r);

}  // namespace vtime::sim
