// A sweep's results: each run's result.json (written when it ends), its metrics read back from its
// outputs, and the two tables, DIR/runs.csv (one row per finished run) and DIR/summary.csv (one
// row per configuration). docs/sweep.md documents every column.
//
// Example:
//     write_result(run_dir, outcome);                 // as each run ends
//     Report rep = build_report(plan, dir);           // at the end, from what is on disk
//     write_runs_csv(plan, rep, dir + "/runs.csv");
//     write_summary_csv(plan, rep, dir + "/summary.csv");
#pragma once

#include <vtime/sweep/plan.h>
#include <vtime/sweep/process_pool.h>
#include <vtime/sweep/run_outputs.h>
#include <vtime/sweep/statistics.h>

#include <optional>
#include <string>
#include <vector>

namespace vtime::sweep {

// ok, bad_reply, crash, busy, blocked, sim_failed, timeout, killed or error (docs/sweep.md), from
// `vtime run`'s exit code and how the pool ended it; or the executor's fault (Outcome::fault).
std::string status_of(const Outcome& o);
// A status that says the run's task was ended from outside (cancelled, lost its node, ...), not
// what the run did: --resume runs it again.
bool executor_fault(const std::string& status);

// Failure kinds summed in summary.csv.
enum class FailureKind { kNone, kCrash, kHang, kBadReply, kOther };
FailureKind failure_kind(const std::string& status);

struct RunResult {
  std::string status;
  int exit_code = 0;
  double wall_s = 0;
  std::string reason;  // for an executor's fault: what the cluster said, and the task's output
};

// Writes `text` to `path` through PATH.tmp and a rename: a reader never sees half a file.
bool write_file_atomic(const std::string& path, const std::string& text);

// DIR/runs/ID/result.json, written atomically: its presence means the run is finished.
bool write_result(const std::string& run_dir, const Outcome& o, std::string* error);
std::optional<RunResult> read_result(const std::string& run_dir);

// The metrics summary.csv aggregates and the plots draw, in column order.
struct MetricInfo {
  const char* name;   // column stem
  const char* label;  // axis label
};
const std::vector<MetricInfo>& metrics();

struct RunMetrics {
  std::optional<RunResult> result;  // none: not finished
  std::optional<RunOutputs> outputs;
  std::optional<Deviation> deviation;  // none when the run or its reference has no outputs
  int overlaps = 0;
  // Per metrics() entry, the value if known.
  std::vector<std::optional<double>> values;
};

struct ConfigurationSummary {
  size_t finished = 0, ok = 0, crashes = 0, hangs = 0, bad_replies = 0, other_failures = 0;
  std::vector<Stats> stats;  // per metrics() entry, over the runs that ended ok
  std::optional<double> reference_makespan, reference_mean_waiting_time;
};

struct Report {
  std::vector<RunMetrics> runs;                    // per Plan::runs
  std::vector<ConfigurationSummary> configurations;  // per Plan::configurations
};

// The output prefix of a run inside its folder.
inline std::string run_prefix(const std::string& dir, const PlannedRun& r) { return dir + "/runs/" + r.id + "/out"; }

Report build_report(const Plan& plan, const std::string& dir);
bool write_runs_csv(const Plan& plan, const Report& report, const std::string& path);
bool write_summary_csv(const Plan& plan, const Report& report, const std::string& path);

}  // namespace vtime::sweep
