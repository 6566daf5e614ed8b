// What the broker knows of the jobs: enough to validate the scheduler's decisions before they
// reach Batsim (which aborts on an invalid one) and to know when every job is done.
#pragma once

#include <vtime/protocol/events.h>

#include "id_arena.h"
#include "retired_ids.h"

#include <string>
#include <string_view>
#include <vector>

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
  // The jobs in flight: an open-addressing table (linear probing, deletion by backward shift) of
  // 12-byte slots, at most 3/4 full, whose ids are in the arena. A node-based hash map took ~72
  // bytes per job: 21 MB for the 293,000 jobs waiting at once in issue 14's million-job run.
  struct Slot {
    IdArena::Handle id = kEmpty;
    int32_t res = 0;
    State state = State::kSubmitted;
  };
  static_assert(sizeof(Slot) == 12);
  static constexpr IdArena::Handle kEmpty = ~IdArena::Handle{0};
  size_t home(std::string_view id) const;
  Slot* lookup(std::string_view id);
  const Slot* lookup(std::string_view id) const;
  void insert(std::string_view id, int res);
  void grow();
  // Marks a job done or rejected: it leaves the table for retired_, so memory follows the jobs
  // in flight, not the workload (its id stays in the arena, 1-5 bytes + its length).
  void retire(Slot* s);

  IdArena arena_;
  std::vector<Slot> table_;  // size a power of two, or empty
  size_t in_flight_ = 0;
  RetiredIds retired_{arena_};
  size_t submitted_ = 0, done_ = 0;
  int nb_resources_ = 0;
  bool no_more_static_ = false;
};

}  // namespace vtime::broker
