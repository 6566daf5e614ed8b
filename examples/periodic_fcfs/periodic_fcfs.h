// PeriodicFcfs: the FCFS policy of event_fcfs written the way real-time schedulers are: a
// background thread wakes every period (condition_variable::wait_for) and runs one FCFS pass,
// while the protocol thread only records what Batsim says and hands over the decisions queued
// since its last reply. Nothing here asks Batsim for CALL_ME_LATER: under `vtime run` the broker
// turns the thread's waits into them.
//
// Decision instants: the thread starts its loop when SIMULATION_BEGINS arrives (at 0), so with a
// frozen clock (vtime's default decision-time model) it passes at P, 2P, 3P, ... — exactly the
// REQUESTED_CALL instants of `event_fcfs --period P`. A pass sees every event Batsim sent up to
// and including its instant (the broker delivers Batsim's message before firing timers due at
// the same time), so both programs produce the same schedule.
//
// Example (protocol thread):
//     PeriodicFcfs s(std::chrono::seconds(1), std::chrono::milliseconds(0));
//     Message reply = s.on_message(in);      // starts the thread on SIMULATION_BEGINS
//     if (s.finished()) s.stop();
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "vtime/protocol/events.h"

namespace periodic_fcfs {

using vtime::protocol::Message;
using vtime::protocol::Payload;

class PeriodicFcfs {
 public:
  // work: real CPU time burnt by each pass after deciding and before publishing its decisions
  // (thread CPU time, which vtime does not virtualise), to study real-time sync policies.
  PeriodicFcfs(std::chrono::nanoseconds period, std::chrono::nanoseconds work);
  ~PeriodicFcfs();  // stop()
  PeriodicFcfs(const PeriodicFcfs&) = delete;
  PeriodicFcfs& operator=(const PeriodicFcfs&) = delete;

  // Protocol thread: records one Batsim message and returns the reply (stamped with in.now),
  // carrying every decision the scheduling thread queued since the previous reply.
  Message on_message(const Message& in);
  bool finished() const { return ended_; }
  // Stops and joins the scheduling thread; idempotent.
  void stop();

 private:
  void loop();
  std::vector<Payload> fcfs_pass();  // with mu_ held

  struct Waiting {
    std::string id;
    int res;
  };
  const std::chrono::nanoseconds period_;
  const std::chrono::nanoseconds work_;

  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  bool stopping_ = false;
  std::deque<Waiting> queue_;        // submitted, not yet started or rejected, in FCFS order
  std::set<int> free_;               // ordered: the lowest ids come first
  int nb_resources_ = 0;
  std::vector<Payload> outbox_;      // decisions not yet handed to Batsim

  bool ended_ = false;               // protocol thread only
  std::thread thread_;               // started on SIMULATION_BEGINS
};

}  // namespace periodic_fcfs
