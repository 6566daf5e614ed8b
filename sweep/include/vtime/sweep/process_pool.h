// Runs a list of commands as child processes, at most N at once, each with its output in its own
// log file: the sweep's runs (each a `vtime run`).
//
// Each child gets its own process group, so a Ctrl-C at the terminal reaches only the sweep,
// which then asks every running child to end in order (SIGINT: `vtime run` writes what happened
// so far) and starts no more; a child whose parent dies gets SIGTERM.
//
// Example:
//     PoolOptions o;
//     o.parallel = 2;
//     o.on_done = [](size_t i, const Outcome& r) { ... r.exit_code ... };
//     bool complete = run_all({{{"/bin/true"}, "/tmp/log"}}, o);
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace vtime::sweep {

struct Command {
  std::vector<std::string> argv;  // argv[0] is a path (no PATH search)
  std::string log_path;           // stdout and stderr go here (truncated); stdin is /dev/null
};

struct Outcome {
  int exit_code = -1;        // the status, or 128+N for a death by signal N
  int signal = 0;            // the signal that ended it, if any
  bool timed_out = false;    // it outlived PoolOptions::run_timeout_s and was ended
  bool interrupted = false;  // ended because the pool was stopped
  double wall_s = 0;
  // Set by an executor that runs elsewhere (the Slurm executor): the run did not end by itself
  // but its task did (cancelled, task_timeout, node_fail, preempted, task_failed, lost), and why.
  std::string fault;
  std::string reason;
};

struct PoolOptions {
  size_t parallel = 1;
  double run_timeout_s = 0;  // 0: none
  // Polled; a non-zero value (a signal number) stops the pool.
  std::function<int()> stop_requested;
  std::function<void(size_t index)> on_start;
  std::function<void(size_t index, const Outcome&)> on_done;
  // An executor with a queue (Slurm): how many of the commands not started yet are queued.
  std::function<void(size_t queued)> on_queued;
};

// `a` as a POSIX shell reads it back: as is when it holds only safe characters, else in single
// quotes.
std::string shell_word(const std::string& a);

// Runs commands[i] in index order. Returns false when stopped before every command had ended
// (the ones cut short are reported with `interrupted`, those never started are not reported).
bool run_all(const std::vector<Command>& commands, const PoolOptions& options);

}  // namespace vtime::sweep
