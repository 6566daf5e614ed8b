// One vtime subcommand: the CLI11 sub-app it registered and the action to run when it was chosen.
//
// Each subcommand lives in its own file (cmd_<name>.cpp) and exposes one register function that
// adds its options (parsed into a plain struct it owns) and returns the action. main.cpp lists
// the register functions; the chosen action's return value is the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>

namespace vtime::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Exit codes shared by every subcommand (docs/cli.md documents them).
inline constexpr int kExitUsage = 2;        // bad command line or unreadable input file
inline constexpr int kExitInternal = 125;   // vtime itself failed (cannot create session, ...)
inline constexpr int kExitCannotRun = 126;  // the command was found but could not be run
inline constexpr int kExitNotFound = 127;   // the command was not found

Subcommand register_exec(CLI::App& root);
Subcommand register_sim(CLI::App& root);
Subcommand register_rewrite(CLI::App& root);
Subcommand register_run(CLI::App& root);
Subcommand register_replay(CLI::App& root);
Subcommand register_trace(CLI::App& root);
Subcommand register_slurm(CLI::App& root);
Subcommand register_k8s(CLI::App& root);
Subcommand register_validate(CLI::App& root);
Subcommand register_sweep(CLI::App& root);
// `vtime sweep-task`: one Slurm task of `vtime sweep --executor slurm` (hidden from --help).
Subcommand register_sweep_task(CLI::App& root);
Subcommand register_workload(CLI::App& root);
Subcommand register_completion(CLI::App& root);

}  // namespace vtime::cli
