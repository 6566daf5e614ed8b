// The sweep's runs as tasks of Slurm job arrays (`vtime sweep --executor slurm`): each task runs
// `vtime sweep-task` on a compute node, which runs its share of the runs and writes each run's
// outcome beside its outputs in the shared output directory; the sweep polls squeue and those
// files, and reports every run as the local process pool does. A task that ends without an
// outcome for a run (scancel, a time limit, a lost node) is reported with Slurm's state and the
// end of the task's output, never dropped.
//
// Example:
//     SlurmOptions so;  so.partition = "short";  so.vtime = exe;  so.work_dir = dir + "/slurm";
//     if (auto bad = check_slurm_options(so); !bad.empty()) ... usage error ...
//     if (auto down = check_cluster(so); !down.empty()) ... cluster error, nothing submitted ...
//     bool complete = run_on_slurm(commands, pool_options, so, "stage1", &error);
#pragma once

#include <vtime/sweep/process_pool.h>

#include <cstddef>
#include <string>
#include <vector>

namespace vtime::sweep {

struct SlurmOptions {
  std::string partition;                 // sbatch --partition (empty: the cluster's default)
  std::string time_limit;                // sbatch --time per task (empty: the partition's)
  std::vector<std::string> sbatch_args;  // more sbatch arguments, as given
  int throttle = 0;                      // --array=...%N: tasks running at once (0: no limit)
  int runs_per_task = 1;                 // runs one task runs one after another
  double poll_s = 2;                     // seconds between looks at squeue and the outcomes
  std::string job_name = "vtime-sweep";
  std::string vtime;     // the vtime executable every task runs (the sweep's own)
  std::string work_dir;  // where task files, scripts and task outputs go (DIR/slurm)
  size_t max_array_size = 1001;  // the cluster's MaxArraySize (check_cluster reads it)
};

// Whether the options are well formed (a Slurm time format, no sbatch argument the executor sets
// itself): "" or what is wrong.
std::string check_slurm_options(const SlurmOptions& o);
// Whether the cluster can take the sweep, asked before anything is submitted: the tools are in
// PATH, slurmctld answers, and `sbatch --test-only` accepts a task with these options. "" or why
// not. Reads the cluster's MaxArraySize into o.
std::string check_cluster(SlurmOptions& o);
// The arrays an earlier sweep with this work_dir submitted (its `jobs` file) of which Slurm still
// has tasks queued or running, as "ID,ID"; "" when none (or there is no squeue to ask).
std::string still_queued(const std::string& work_dir);
// Runs `commands` as tasks of job arrays named after `stage`, with the contract of run_all (the
// callbacks of `po`, false when stopped: the arrays are then cancelled). *error says why a
// submission failed (then false, with nothing left queued).
bool run_on_slurm(const std::vector<Command>& commands, const PoolOptions& po, const SlurmOptions& o,
                  const std::string& stage, std::string* error);

}  // namespace vtime::sweep
