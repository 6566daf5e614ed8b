// The runs of a sweep: workloads x the cross product of the swept parameters' values x the
// repetitions, plus one exact reference per workload and combination of the parameters the
// reference depends on. The plan is a pure function of the sweep's definition, so a resumed
// sweep finds its finished runs under the same names.
//
// Example:
//     Plan p = make_plan(params, workloads, 3, [&](const Values& v) { return sync_is_exact(v); });
//     for (const PlannedRun& r : p.runs) ... r.id, r.reference, r.repeat ...
#pragma once

#include <vtime/sweep/values.h>

#include <functional>
#include <string>
#include <vector>

namespace vtime::sweep {

struct Param {
  std::string name;  // a `vtime run` option without its dashes, or a {placeholder}'s name
  std::string spec;  // VALUES as given
  ParamKind kind;
  bool sync_only = false;  // a sync-policy knob: the exact reference runs without it
  ParamValues values;
};

struct Workload {
  std::string path;
  std::string name;  // its file name without .json, made unique
};

// Per parameter, the index of its value; kUnused where a run does not set it (the reference's
// sync-policy parameters).
using Values = std::vector<int>;
inline constexpr int kUnused = -1;

struct PlannedRun {
  std::string id;  // its folder under DIR/runs/: sequence number and a readable name
  size_t workload = 0;
  Values values;
  bool reference = false;
  bool exact = false;  // in exact sync (every reference; nothing else, since exact runs are references)
  int repeat = 1;      // 1..N
};

// A row of summary.csv: one combination of values on one workload, its runs, and the exact
// reference it is compared with.
struct Configuration {
  size_t workload = 0;
  Values values;
  bool reference = false;
  bool exact = false;        // in exact sync: its run is its reference
  std::vector<size_t> runs;  // indices into Plan::runs
  size_t reference_run = 0;  // index into Plan::runs
};

struct Plan {
  std::vector<Param> params;
  std::vector<Workload> workloads;
  std::vector<PlannedRun> runs;
  std::vector<Configuration> configurations;
};

// `is_exact(values)`: whether a combination runs in exact sync (then its one run is the
// reference itself, never repeated).
Plan make_plan(std::vector<Param> params, std::vector<Workload> workloads, int repeat,
               const std::function<bool(const Values&)>& is_exact);

// Unique display names for workload files (spaced_200, spaced_200-2 for a second of that name).
std::vector<Workload> name_workloads(const std::vector<std::string>& paths);

}  // namespace vtime::sweep
