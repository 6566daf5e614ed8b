// What `vtime run` and its shorthands (`vtime slurm`) share: the options and the action.
#pragma once

#include "broker_options.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace vtime::cli {

struct RunOptions {
  std::string platform;
  int hosts = 0;
  std::string workload;
  std::string prefix = "out";
  std::string batsim;
  BrokerOptions broker;
  std::string record;
  bool compress = false;
  std::vector<std::string> clock_ignore;  // with record: more clock-read patterns left out
  bool quiet = false;
  std::string pin_cpu = "off";  // --pin-cpu (cpu_pin.h)
  std::vector<std::string> command;  // the scheduler; "{endpoint}" is replaced by its endpoint
  // Check every option and exit (vtime's own, then the scheduler's: a bridge that takes --check,
  // vtime-slurm and vtime-k8s): nothing runs. `vtime validate` checks the options of its virtual
  // runs this way before its real ones.
  bool check_only = false;
};

// `--check` for the subcommands whose scheduler is one of vtime's bridges.
void add_check_option(CLI::App& app, RunOptions& o);

// Every option of `vtime run` but the scheduler command.
void add_run_options(CLI::App& app, RunOptions& o);
// Runs the simulation; returns the exit code documented in docs/cli.md.
int run_action(const RunOptions& o);

}  // namespace vtime::cli
