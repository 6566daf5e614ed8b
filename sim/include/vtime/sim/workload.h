// Workload: the jobs and profiles of a Batsim JSON workload file, as vtime sim simulates them.
//
// Only "delay" profiles are simulated (a job occupies its resources for `delay` seconds, or
// until its walltime). A job using any other profile type is refused with a clear error: those
// need SimGrid's models, i.e. real Batsim. Job and profile descriptions are also kept verbatim
// (in Batsim's JSON format) because Batsim forwards them to the scheduler.
//
// A file is simulated through a JobSource, which reads it job by job in submission order: the
// simulator holds the jobs submitted and not yet finished, plus an index of a few bytes per job
// (ids, submission times, phases), never the whole workload (docs/sim.md, "Memory").
//
// Example:
//     auto src = open_workload("examples/workloads/kit_10h_80.json", "w0");   // validates it all
//     if (!src) die(src.error());
//     while (auto t = (*src)->next_subtime()) {
//       auto batch = (*src)->next_batch();          // every job submitted at *t, in id order
//       for (const auto& j : *batch) use(j.id, j.subtime, j.res, (*src)->info().profiles[j.profile].delay);
//     }
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  std::string type;            // Batsim's: delay, parallel, parallel_homogeneous, ..., composed
  Nanos delay;                 // delay
  int return_code = 0;         // the profile's "ret" (non-zero: COMPLETED_FAILED)
  // parallel: flops of each executor; parallel_homogeneous: [flops per host];
  // parallel_homogeneous_total: [flops in all]. No communication (refused otherwise).
  std::vector<double> cpu;
  std::vector<uint32_t> seq;   // composed: the profiles of one round, in order
  uint32_t repeat = 1;         // composed: rounds
  // Why vtime sim cannot simulate a job of this profile ("" if it can), e.g. a parallel task
  // that communicates (it needs SimGrid's flow-level network sharing).
  std::string unsupported;
};

struct WorkloadJob {
  size_t index = 0;            // position in the file's "jobs" array
  std::string name;            // id inside the workload ("12"); the full id is "w0!12"
  std::string id;              // full id
  Nanos subtime;
  std::optional<Nanos> walltime;
  int res = 1;
  size_t profile = 0;          // index in Workload::profiles
  RawJson json;                // description sent in JOB_SUBMITTED (id replaced by the full id)
};

// Everything of a workload but its jobs.
struct WorkloadInfo {
  std::string name;            // "w0"
  std::string file;            // as given on the command line (shown in SIMULATION_BEGINS)
  std::vector<Profile> profiles;
  RawJson profiles_json;       // the "profiles" object, for SIMULATION_BEGINS
  std::optional<int64_t> nb_res;  // the platform size it was written for, when it says (not used by the simulation)
};

// A whole workload in memory (small workloads, tests).
struct Workload : WorkloadInfo {
  std::vector<WorkloadJob> jobs;
};

Result<Workload> load_workload(const std::string& path, const std::string& name);
Result<Workload> parse_workload(const std::string& text, const std::string& path, const std::string& name);

// Every job's id and submission time, in file order: what a source indexes.
struct JobKeys {
  std::string names;                     // every id, back to back
  std::vector<uint32_t> offsets{0};      // job i's id is names[offsets[i], offsets[i + 1])
  std::vector<Nanos> subtimes;
  void add(std::string_view name, Nanos subtime);
  void reserve(size_t jobs);
  size_t size() const { return subtimes.size(); }
  std::string_view name(size_t i) const {
    return std::string_view(names).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
  // The first job (in file order) whose id an earlier job has, if any.
  std::optional<size_t> first_duplicate() const;
};

// The jobs of a validated workload in Batsim's submission order: by submission time, the jobs of
// one instant together in job-id order. Also answers, for any job id of the workload, its slot
// (its position in the file: the simulator keeps per-job state under it) and submission time.
class JobSource {
 public:
  virtual ~JobSource() = default;
  const WorkloadInfo& info() const { return info_; }
  size_t size() const { return keys_.size(); }
  // When the next batch is submitted; nullopt once every batch was taken.
  std::optional<Nanos> next_subtime() const;
  // Every job submitted at next_subtime(), in id order. An error only if the file could not be
  // read again (it changed or vanished during the run).
  Result<std::vector<WorkloadJob>> next_batch();
  // The slot of a job id ("12", without the workload prefix); nullopt if no job has it.
  std::optional<uint32_t> slot(std::string_view name) const;
  Nanos subtime(uint32_t slot) const { return keys_.subtimes[slot]; }
  // The id of a slot's job ("12", without the workload prefix).
  std::string_view name(uint32_t slot) const { return keys_.name(slot); }

 protected:
  // `keys` must hold no duplicate id.
  JobSource(WorkloadInfo info, JobKeys keys);
  // Appends the `count` jobs submitted at `t` (in any order); returns the error, or "".
  virtual std::string fetch(Nanos t, size_t count, std::vector<WorkloadJob>& out) = 0;

  WorkloadInfo info_;

 private:
  JobKeys keys_;
  std::vector<uint32_t> by_name_;        // slots in id order, for slot()
  std::vector<uint32_t> by_time_;        // slots in submission order (then file order)
  size_t next_ = 0;                      // the first slot of by_time_ not yet taken
};

// Opens and validates a workload file (the same checks and messages as load_workload), then
// reads its jobs again as they are submitted, so memory does not grow with the file.
Result<std::unique_ptr<JobSource>> open_workload(const std::string& path, const std::string& name);
// A workload already in memory as a source.
std::unique_ptr<JobSource> memory_source(Workload w);

}  // namespace vtime::sim
