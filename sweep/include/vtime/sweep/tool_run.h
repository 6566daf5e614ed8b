// Runs a short-lived tool (sbatch, squeue, scontrol, scancel) and captures what it printed: the
// Slurm executor's only way of talking to the cluster, as a user's shell would.
//
// Example:
//     ToolResult r = run_tool({"scontrol", "ping"}, 20);
//     if (!r.ran() || r.exit_code != 0) ... r.error, r.err ...
#pragma once

#include <string>
#include <vector>

namespace vtime::sweep {

struct ToolResult {
  int exit_code = -1;   // the status, 128+N for a death by signal N, -1 when it did not run
  std::string out, err;  // stdout and stderr, whole
  std::string error;     // why it did not run or did not finish (not found, timed out), else empty
  bool ran() const { return error.empty(); }
};

// Runs argv (argv[0] looked up in PATH) with stdin from /dev/null; kills it after `timeout_s`.
ToolResult run_tool(const std::vector<std::string>& argv, double timeout_s);

// Whether `name` is an executable in PATH.
bool in_path(const std::string& name);

}  // namespace vtime::sweep
