// vtime-rewrite: the executable holding the rewrite subcommand. `vtime rewrite ARGS` runs
// `vtime-rewrite rewrite ARGS` (named `vtime` in argv[0], so the usage lines read `vtime rewrite`),
// which keeps libclang and LLVM out of the `vtime` binary. The rewriter itself is rewriter/'s library. Same options and exit codes.
#include "rewrite_tool.h"
#include "completion_table.h"

#include <iostream>

int main(int argc, char** argv) {
  CLI::App root{"vtime-rewrite: the `vtime rewrite` subcommand on its own"};
  root.require_subcommand(1);
  root.set_version_flag("--version", "vtime-rewrite " VTIME_VERSION);
  vtime::cli::Subcommand cmd = vtime::cli::register_rewrite_tool(root);
  // For `vtime completion`: this program's option table (completion_table.h). Hidden.
  CLI::App* table = root.add_subcommand("completion-table", "Print the option table")->group("");
  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = root.exit(e);
    return code == 0 ? 0 : vtime::cli::kExitUsage;
  }
  if (table->parsed()) {
    std::vector<vtime::cli::CommandEntry> entries;
    vtime::cli::collect_commands(root, "", entries);
    vtime::cli::write_table(std::cout, entries);
    return 0;
  }
  return cmd.run();
}
