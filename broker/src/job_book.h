// What the broker knows of the jobs: enough to validate the scheduler's decisions before they
// reach Batsim (which aborts on an invalid one) and to know when every job is done.
#pragma once

#include <vtime/protocol/events.h>

#include "retired_ids.h"

#include <string>
#include <unordered_map>

namespace vtime::broker {

class JobBook {
 public:
  // Batsim's side of the conversation.
  void on_batsim_event(const protocol::Event& e);
  // A validated decision forwarded to Batsim.
  void on_decision(const protocol::Event& e);

  bool no_more_static_jobs() const { return no_more_static_; }
  // Every submitted job finished or was rejected, and no more will come.
  bool all_done() const;
  int nb_resources() const { return nb_resources_; }

  enum class State { kSubmitted, kRunning, kDone, kRejected };
  const State* find(const std::string& id) const;
  int requested(const std::string& id) const;
  size_t submitted() const { return submitted_; }
  size_t done() const { return done_; }

 private:
  struct Job {
    int res = 0;
    State state = State::kSubmitted;
  };
  // Marks a job done or rejected: it leaves jobs_ for retired_, so memory follows the jobs in
  // flight, not the workload.
  void retire(std::unordered_map<std::string, Job>::iterator it);

  std::unordered_map<std::string, Job> jobs_;  // submitted, not ended
  RetiredIds retired_;
  size_t submitted_ = 0, done_ = 0;
  int nb_resources_ = 0;
  bool no_more_static_ = false;
};

}  // namespace vtime::broker
