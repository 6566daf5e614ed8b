// Workload: the jobs and profiles of a Batsim JSON workload file, as vtime sim simulates them.
//
// Only "delay" profiles are simulated (a job occupies its resources for `delay` seconds, or
// until its walltime). A job using any other profile type is refused with a clear error: those
// need SimGrid's models, i.e. real Batsim. Job and profile descriptions are also kept verbatim
// (in Batsim's JSON format) because Batsim forwards them to the scheduler.
//
// Example:
//     auto w = load_workload("examples/workloads/kit_10h_80.json", "w0");
//     if (!w) die(w.error());
//     for (const auto& j : w->jobs) use(j.id, j.subtime, j.res, w->profiles[j.profile].delay);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vtime/protocol/events.h"
#include "vtime/protocol/nanos.h"
#include "vtime/protocol/result.h"

namespace vtime::sim {

using protocol::Nanos;
using protocol::RawJson;
using protocol::Result;

struct Profile {
  std::string name;
  std::string type;            // "delay" for every profile a job uses
  Nanos delay;
  int return_code = 0;         // the profile's "ret" (non-zero: COMPLETED_FAILED)
};

struct WorkloadJob {
  std::string name;            // id inside the workload ("12"); the full id is "w0!12"
  std::string id;              // full id
  Nanos subtime;
  std::optional<Nanos> walltime;
  int res = 1;
  size_t profile = 0;          // index in Workload::profiles
  RawJson json;                // description sent in JOB_SUBMITTED (id replaced by the full id)
};

struct Workload {
  std::string name;            // "w0"
  std::string file;            // as given on the command line (shown in SIMULATION_BEGINS)
  std::vector<WorkloadJob> jobs;
  std::vector<Profile> profiles;
  RawJson profiles_json;       // the "profiles" object, for SIMULATION_BEGINS
  std::optional<int64_t> nb_res;  // the platform size it was written for, when it says (not used by the simulation)
};

Result<Workload> load_workload(const std::string& path, const std::string& name);
Result<Workload> parse_workload(const std::string& text, const std::string& path, const std::string& name);

}  // namespace vtime::sim
