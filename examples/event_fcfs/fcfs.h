// Fcfs: plain first-come-first-served on the lowest-numbered free resources, as a pure function
// of the Batsim events it is fed (no I/O, so it is easy to reason about and to test).
//
// Event mode: decides after every message. Periodic mode (period > 0): decides only when a
// REQUESTED_CALL arrives, and keeps one CALL_ME_LATER at now + period outstanding until Batsim
// has said no_more_static_job_to_submit and no job waits, so the simulation can end.
#pragma once

#include <deque>
#include <set>
#include <string>
#include <vector>

#include "vtime/protocol/events.h"

namespace event_fcfs {

using vtime::protocol::Event;
using vtime::protocol::Message;
using vtime::protocol::Nanos;

class Fcfs {
 public:
  explicit Fcfs(Nanos period) : period_(period) {}

  // Handles one Batsim message and returns the reply to send.
  Message on_message(const Message& in);
  bool finished() const { return ended_; }

 private:
  void schedule(Nanos now, std::vector<Event>& out);

  struct Waiting {
    std::string id;
    int res;
  };
  Nanos period_;
  std::deque<Waiting> queue_;
  std::set<int> free_;               // ordered: the lowest ids come first
  int nb_resources_ = 0;
  bool no_more_jobs_ = false;
  bool call_pending_ = false;
  bool ended_ = false;
};

}  // namespace event_fcfs
