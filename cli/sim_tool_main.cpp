// vtime-sim: the `vtime sim` subcommand as its own small program, so the simulator can be built
// and tested while the full `vtime` CLI is assembled elsewhere. Same options, same exit codes.
#include <cstdio>

#include "command.h"

int main(int argc, char** argv) {
  CLI::App root{"vtime-sim: standalone build of `vtime sim` (see `vtime-sim sim --help`)."};
  root.require_subcommand(1);
  vtime::cli::Subcommand sim = vtime::cli::register_sim(root);
  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = root.exit(e);
    return code == 0 ? 0 : vtime::cli::kExitUsage;
  }
  return sim.run();
}
