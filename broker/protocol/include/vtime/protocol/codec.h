// Batsim 4.2.1 JSON protocol: bytes <-> typed Message (events.h).
//
// parse_message validates like Batsim 4.2.1's reader does (same structural rules, same member
// counts for scheduler decisions) and reports the first problem as one precise line:
//     "event 2 (EXECUTE_JOB): field 'alloc' must be a string like '0-3 5' (got number 3)"
// It never throws and never aborts. Semantic checks that need simulation state (unknown job,
// allocation size, CALL_ME_LATER in the past) belong to the peer that owns that state.
//
// serialise writes Batsim's own byte format: compact JSON, fixed key order, times as "%f"
// (finer-than-microsecond times keep 9 decimals, see nanos.h). Messages built by Batsim
// round-trip byte-for-byte; others round-trip semantically.
//
// Example:
//     auto r = parse_message(reply_bytes, Direction::to_batsim);
//     if (!r) return report(r.error());
//     for (const Event& e : r->events)
//       if (auto* ex = std::get_if<ExecuteJob>(&e.payload)) start(ex->job_id, ex->alloc);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vtime/protocol/events.h"
#include "vtime/protocol/result.h"

namespace vtime::protocol {

// Who the message is addressed to; decides which event types are acceptable.
enum class Direction {
  to_scheduler,  // written by Batsim (or vtime sim)
  to_batsim,     // written by a scheduler (or the broker on its behalf)
};

Result<Message> parse_message(std::string_view bytes, Direction dir);

std::string serialise(const Message& m);
std::string serialise(const Event& e);

// JOB_KILLED's "job_progress" for jobs running a single (non-sequence) profile:
// {"w0!1":{"profile_name":"delay10","progress":0.500000}}.
struct JobProgress {
  std::string job_id;
  std::string profile_name;  // the running (leaf) profile
  double progress = 0;       // fraction of it done, 0..1
  // When the job's profile is composed: each composed profile on the way to the leaf, outermost
  // first, with its current step (Batsim's "current_task_index", counted across repeats).
  struct Step {
    std::string profile_name;
    int current_task_index = 0;
  };
  std::vector<Step> within;
};
RawJson job_progress_json(const std::vector<JobProgress>& jobs);

// Re-writes any JSON text in Batsim's format (compact, key order kept, doubles as "%f").
// Used for opaque parts built outside the protocol module, e.g. workload job descriptions.
Result<RawJson> canonical_json(std::string_view json_text);

}  // namespace vtime::protocol
