// vtime-rewrite: the executable holding the rewrite subcommand. `vtime rewrite ARGS` runs
// `vtime-rewrite rewrite ARGS` (named `vtime` in argv[0], so the usage lines read `vtime rewrite`),
// which keeps libclang and LLVM out of the `vtime` binary. Same options and exit codes.
#include "cmd_rewrite.h"

int main(int argc, char** argv) {
  CLI::App root{"vtime-rewrite: the `vtime rewrite` subcommand on its own"};
  root.require_subcommand(1);
  vtime::cli::Subcommand cmd = vtime::cli::register_rewrite(root);
  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = root.exit(e);
    return code == 0 ? 0 : vtime::cli::kExitUsage;
  }
  return cmd.run();
}
