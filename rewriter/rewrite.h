// `vtime rewrite` as a library call: options in, edits applied or printed, exit code out.
//
// Example:
//     RewriteOptions o;
//     o.build_dir = "build";
//     o.files = {"src/main.cpp"};
//     o.mode = OutputMode::InPlace;
//     int code = run_rewrite(o, std::cout, std::cerr);
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtime::rewriter {

enum class OutputMode { Diff, InPlace, ExportFixes };

struct RewriteOptions {
  std::string build_dir;           // -p: directory holding compile_commands.json ("" = none)
  OutputMode mode = OutputMode::Diff;
  std::string fixes_file;          // --export-fixes FILE
  std::string report_file;         // --report FILE ("" = none)
  std::vector<std::string> files;  // empty = every file of the compilation database
  std::string root;                // --root: only files under it are edited ("" = cwd)
  std::string resource_dir;        // --resource-dir ("" = the one found at build time)
};

// Exit codes (docs/rewriter.md): 0 every site rewritten (or nothing to do); 1 a site was
// skipped or a file failed to parse; usage errors throw UsageError (the CLI maps it to 2).
inline constexpr int kExitOk = 0;
inline constexpr int kExitIncomplete = 1;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The clang resource directory found at build time.
const char* default_resource_dir();

int run_rewrite(const RewriteOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace vtime::rewriter
