// vtime: the command-line entry point. Parses the subcommand and runs its action.
#include "command.h"

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  CLI::App root{
      "vtime: run real, unmodified programs and schedulers under a virtual clock.\n"
      "Exit codes: see docs/cli.md (2 usage error, 125 internal error, 126/127 command not\n"
      "runnable/not found; otherwise the wrapped command's own status)."};
  root.require_subcommand(1);
  root.set_version_flag("--version", "vtime " VTIME_VERSION);

  std::vector<vtime::cli::Subcommand> commands;
  commands.push_back(vtime::cli::register_exec(root));
#ifdef VTIME_WITH_SIM
  commands.push_back(vtime::cli::register_sim(root));
#endif
#ifdef VTIME_WITH_RUN
  commands.push_back(vtime::cli::register_run(root));
  commands.push_back(vtime::cli::register_replay(root));
#endif
#ifdef VTIME_WITH_WORKLOAD
  commands.push_back(vtime::cli::register_workload(root));
#endif
#ifdef VTIME_WITH_SWEEP
  commands.push_back(vtime::cli::register_sweep(root));
#endif
#ifdef VTIME_WITH_SLURM
  commands.push_back(vtime::cli::register_slurm(root));
#endif
#ifdef VTIME_WITH_K8S
  commands.push_back(vtime::cli::register_k8s(root));
#endif
#ifdef VTIME_WITH_REWRITE
  commands.push_back(vtime::cli::register_rewrite(root));
#endif
#ifdef VTIME_WITH_TRACE
  commands.push_back(vtime::cli::register_trace(root));
#endif
  commands.push_back(vtime::cli::register_completion(root));  // last: it reads the others' tables

  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = root.exit(e);
    return code == 0 ? 0 : vtime::cli::kExitUsage;
  }
  for (auto& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return vtime::cli::kExitUsage;
}
