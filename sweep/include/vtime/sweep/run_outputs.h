// What one run left behind (the simulator's PREFIX_jobs.csv and PREFIX_schedule.csv), and how a
// run deviates from the exact reference.
//
// Example:
//     auto ref = read_outputs("sweep/runs/0000_ref/out");
//     auto run = read_outputs("sweep/runs/0003_timeout=10_r1/out");
//     if (ref && run) { Deviation d = deviation(*ref, *run); ... d.jobs_late ... }
#pragma once

#include <vtime/protocol/result.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vtime::sweep {

using protocol::Error;
using protocol::Result;

struct JobOutcome {
  std::string id;
  std::string final_state;  // COMPLETED_SUCCESSFULLY, COMPLETED_KILLED, REJECTED, ...
  std::optional<double> start, finish;  // seconds; none for a rejected job
  std::vector<int> resources;  // the allocation, expanded ("0-2 5" -> 0 1 2 5)
};

struct RunOutputs {
  std::vector<JobOutcome> jobs;                  // in the file's (completion) order
  std::map<std::string, std::string> schedule;  // _schedule.csv's one row, by column
};

// Reads PREFIX_jobs.csv and PREFIX_schedule.csv. A missing schedule (a run cut short) leaves
// `schedule` empty; a missing or malformed jobs file is an error naming the file and line.
Result<RunOutputs> read_outputs(const std::string& prefix);

struct Deviation {
  double mean_abs_start_delta = 0;  // seconds, over the jobs both runs started
  double max_abs_start_delta = 0;
  int jobs_late = 0;    // started later than in the reference
  int jobs_early = 0;   // started earlier
  int jobs_differ = 0;  // a different outcome: missing from the run, or rejected/killed in one only
};

// `run` against `reference`, job by job (by id). Starts closer than a microsecond are equal (the
// files print six decimals).
Deviation deviation(const RunOutputs& reference, const RunOutputs& run);

// Jobs whose allocation overlaps, on some resource, an earlier job still running there: the
// over-allocations a stale view of the cluster makes (Batsim with compute sharing accepts them;
// vtime's simulator and Batsim without it refuse the reply instead).
int overlapping_allocations(const RunOutputs& run);

}  // namespace vtime::sweep
