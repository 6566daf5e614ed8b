// What the Slurm executor hands a cluster: a stage's task file (which runs each array task runs,
// where each writes its log and its outcome), and what one task does with it (`vtime
// sweep-task FILE INDEX`). The sweep on the submit host reads the outcomes back; a run's
// outcome.json is written through a rename, so a half-written one is never read as finished.
//
// Example (the task, on a compute node):
//     auto tf = read_task_file("DIR/slurm/stage1.json");
//     return run_task(*tf, index, [] { return sim::stop_signal(); });
#pragma once

#include <vtime/protocol/result.h>
#include <vtime/sweep/process_pool.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vtime::sweep {

struct TaskRun {
  std::vector<std::string> argv;  // the run's `vtime run` command
  std::string log_path;
  std::string outcome_path;  // RUN_DIR/outcome.json
};

struct TaskFile {
  double run_timeout_s = 0;  // the sweep's --run-timeout, per run
  std::vector<std::vector<TaskRun>> tasks;  // per array index, its runs in order
};

bool write_task_file(const std::string& path, const TaskFile& tf, std::string* error);
protocol::Result<TaskFile> read_task_file(const std::string& path);

// A run's outcome as its task saw it (atomically written).
bool write_outcome(const std::string& path, const Outcome& o);
std::optional<Outcome> read_outcome(const std::string& path);

// Runs the runs of task `index` one after another, writing each one's outcome as it ends
// (`interrupted` set for one cut short). Returns 0 when every run ended (whatever its status),
// 128+N when stopped by signal N (stop_requested), 2 when `index` is not a task of the file.
int run_task(const TaskFile& tf, size_t index, const std::function<int()>& stop_requested);

}  // namespace vtime::sweep
