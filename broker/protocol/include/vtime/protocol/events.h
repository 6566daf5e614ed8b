// Typed Batsim 4.2.1 protocol events: one struct per event type, gathered in a std::variant.
//
// A message is {"now": T, "events": [{"timestamp": T, "type": "...", "data": {...}}, ...]}.
// Times are Nanos (converted from Batsim's double seconds at the edge, see nanos.h). Nothing
// outside the protocol module sees JSON: parts the protocol treats as opaque (SIMULATION_BEGINS'
// "config" and "profiles", a submitted job's full description, unknown extra fields) are kept as
// RawJson text in Batsim's own format, so they can be forwarded byte-for-byte.
//
// Which side sends what (Batsim 4.2.1, as seen in the reference transcripts):
//   Batsim -> scheduler: SIMULATION_BEGINS, JOB_SUBMITTED, JOB_COMPLETED, JOB_KILLED,
//                        REQUESTED_CALL, NOTIFY, SIMULATION_ENDS
//   scheduler -> Batsim: EXECUTE_JOB, REJECT_JOB, KILL_JOB, CALL_ME_LATER, NOTIFY
//   Types Batsim knows but vtime does not model (QUERY, ANSWER, SET_JOB_METADATA, ...) parse
//   into OtherEvent so a broker can still forward them.
//
// Example:
//     Message m{Nanos::from_ns(10'000'600'000), {}};
//     m.events.push_back(Event{m.now, ExecuteJob{"w0!0", ResourceSet::from_ids({0}), {}}});
//     std::string bytes = serialise(m);   // see codec.h
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "vtime/protocol/nanos.h"
#include "vtime/protocol/resource_set.h"

namespace vtime::protocol {

// Compact JSON text in Batsim's format (doubles as "%f", integers as integers, keys in order).
struct RawJson {
  std::string text;
  bool operator==(const RawJson&) const = default;
};

// Members the protocol does not define but tolerates (Batsim ignores them), kept in order.
using Extras = std::vector<std::pair<std::string, RawJson>>;
using StringPairs = std::vector<std::pair<std::string, std::string>>;

// Final states reported by JOB_COMPLETED.
enum class JobState { completed_successfully, completed_failed, completed_walltime_reached, completed_killed };
std::string_view to_string(JobState s);
std::optional<JobState> job_state_from_string(std::string_view s);

struct Resource {
  int id = 0;
  std::string name;
  std::string state = "idle";
  StringPairs properties;       // e.g. {"role", ""}, then the platform's <prop>s
  StringPairs zone_properties;
  bool operator==(const Resource&) const = default;
};

// ---- Batsim -> scheduler ---------------------------------------------------------------------

struct SimulationBegins {
  int nb_resources = 0;
  int nb_compute_resources = 0;
  int nb_storage_resources = 0;
  bool allow_compute_sharing = false;
  bool allow_storage_sharing = true;
  RawJson config{"{}"};
  std::vector<Resource> compute_resources;
  std::vector<Resource> storage_resources;
  StringPairs workloads;        // workload name -> file name as given to Batsim
  RawJson profiles{"{}"};       // {workload: {profile name: profile description}}
  Extras extras;
};

struct SimulationEnds {
  Extras extras;
};

// The typed view of a submitted job's description; the full description stays in job_json.
struct JobDescription {
  std::string id;                  // full id, "w0!12"
  int res = 0;                     // requested number of resources
  Nanos subtime;
  std::optional<Nanos> walltime;   // absent or negative in the JSON: no walltime
  std::string profile;
};

struct JobSubmitted {
  std::string job_id;
  JobDescription job;
  RawJson job_json;                // the "job" object as Batsim sent it; written back verbatim
  std::optional<RawJson> profile;  // only with profiles-forwarded-on-submission
  Extras extras;
};

struct JobCompleted {
  std::string job_id;
  JobState job_state = JobState::completed_successfully;
  int return_code = 0;
  ResourceSet alloc;
  Extras extras;
};

struct JobKilled {
  std::vector<std::string> job_ids;
  RawJson job_progress{"{}"};      // {job id: {"profile_name": ..., "progress": ratio}}
  Extras extras;
};

struct RequestedCall {
  Extras extras;
};

// Both directions. Batsim sends no_more_static_job_to_submit, no_more_external_event_to_occur,
// ...; a scheduler may send registration_finished or continue_registration.
struct Notify {
  std::string type;
  Extras extras;                   // e.g. "resources" of machine availability events
};

// ---- scheduler -> Batsim ---------------------------------------------------------------------

struct ExecuteJob {
  std::string job_id;
  ResourceSet alloc;
  Extras extras;                   // Batsim allows one more member: "mapping", or anything
};

struct RejectJob {
  std::string job_id;
};

struct KillJob {
  std::vector<std::string> job_ids;
};

struct CallMeLater {
  Nanos target;                    // data.timestamp
};

// A type Batsim 4.2.1 accepts in this direction but vtime does not model.
struct OtherEvent {
  std::string type;
  RawJson data;
};

using Payload = std::variant<SimulationBegins, SimulationEnds, JobSubmitted, JobCompleted,
                             JobKilled, RequestedCall, Notify, ExecuteJob, RejectJob, KillJob,
                             CallMeLater, OtherEvent>;

struct Event {
  Nanos timestamp;
  Payload payload;
  Extras extras;                   // unknown members beside timestamp/type/data
};

struct Message {
  Nanos now;
  std::vector<Event> events;
  Extras extras;                   // unknown members beside now/events
};

// "EXECUTE_JOB", "JOB_SUBMITTED", ... (OtherEvent: its own type string).
std::string_view type_name(const Payload& p);

}  // namespace vtime::protocol
