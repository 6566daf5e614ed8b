// vtime-rewrite: a standalone binary holding only the rewrite subcommand, for developing and
// testing the rewriter while the full `vtime` CLI is assembled. Same options and exit codes.
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
