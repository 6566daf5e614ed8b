// `vtime rewrite`: options, help text and exit codes of the libclang source rewriter.
#include "rewrite_tool.h"

#include "rewrite.h"

#include <iostream>
#include <memory>

namespace vtime::cli {

Subcommand register_rewrite_tool(CLI::App& root) {
  auto opts = std::make_shared<rewriter::RewriteOptions>();
  auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // --in-place, --diff
  CLI::App* app = root.add_subcommand(
      "rewrite",
      "Rewrite calls of time functions (libc, std::chrono, std::this_thread, timed waits, time\n"
      "syscalls) into libvtime's API, for programs LD_PRELOAD cannot reach (static binaries, raw\n"
      "syscalls). Prints a unified diff unless --in-place or --export-fixes is given.\n"
      "Exit codes: 0 every site rewritten; 1 a site was skipped or a file failed to parse (see\n"
      "--report); 2 usage error; 125 internal error. See docs/rewriter.md.");
  app->add_option("-p,--build-dir", opts->build_dir, "Directory holding compile_commands.json");
  auto* in_place = app->add_flag("--in-place", flags->first, "Rewrite the files in place (atomically)");
  auto* diff = app->add_flag("--diff", flags->second, "Print a unified diff (the default)");
  auto* fixes = app->add_option("--export-fixes", opts->fixes_file,
                                "Write clang-tidy-style fixes YAML for clang-apply-replacements");
  in_place->excludes(diff, fixes);
  diff->excludes(fixes);
  app->add_option("--report", opts->report_file, "Write the per-site JSON report to this file");
  app->add_option("--root", opts->root, "Only files under this directory are edited (default: cwd)");
  app->add_option("--resource-dir", opts->resource_dir, "Clang resource directory")
      ->default_str(rewriter::default_resource_dir());
  app->add_option("files", opts->files, "Source files (default: every file of the compilation database)");

  return {app, [opts, flags, fixes]() {
            if (flags->first) opts->mode = rewriter::OutputMode::InPlace;
            else if (fixes->count() > 0) opts->mode = rewriter::OutputMode::ExportFixes;
            else opts->mode = rewriter::OutputMode::Diff;
            try {
              return rewriter::run_rewrite(*opts, std::cout, std::cerr);
            } catch (const rewriter::UsageError& e) {
              std::cerr << "vtime rewrite: " << e.what() << "\n";
              return kExitUsage;
            } catch (const std::exception& e) {
              std::cerr << "vtime rewrite: " << e.what() << "\n";
              return kExitInternal;
            }
          }};
}

}  // namespace vtime::cli
