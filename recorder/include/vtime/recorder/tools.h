// The `vtime trace` tools: show, stats, validate, diff, export and compress a decision trace
// (docs/trace-format.md), plain or zstd.
//
// What it is for: the CLI (cli/cmd_trace.cpp) parses options into these structs and calls one
// function; tests call the same functions with string streams. Each function writes its result
// to `out`, its diagnostics (trace problems as "VTxxx line N: ...", errors) to `err`, and returns
// the command's exit code (kTrace*, documented in docs/cli.md). None of them throws on bad input.
//
// Example:
//     using namespace vtime::recorder::tools;
//     int rc = validate("run.trace", std::cout, std::cerr);        // 0: complete and sound
//     ExportOptions e{ExportFormat::jobs_csv, "-"};
//     rc = export_trace("run.trace.zst", e, std::cout, std::cerr);  // the run's _jobs.csv
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace vtime::recorder::tools {

// Exit codes shared by every `vtime trace` command.
inline constexpr int kTraceOk = 0;
// validate/show/stats/export: the trace has problems (listed on stderr), the output covers what
// could be recovered; diff: the traces differ.
inline constexpr int kTraceProblems = 1;
inline constexpr int kTraceUsage = 2;          // bad command line (CLI11), or an unusable request
inline constexpr int kTraceUnreadable = 3;     // VT001/VT002/VT003: nothing can be read at all
inline constexpr int kTraceOutputFailed = 4;   // the output cannot be written, gnuplot missing or failed

// Record types in the order the format lists them; "header" and "trailer" name the first and
// last lines for filtering.
const std::vector<std::string>& record_type_names();

struct ShowOptions {
  std::vector<std::string> types;  // empty: every type
  std::optional<uint64_t> from;    // seq range, inclusive; the header is seq 0
  std::optional<uint64_t> to;
  bool json = false;               // the records' JSON lines instead of summaries
};
int show(const std::string& path, const ShowOptions& o, std::ostream& out, std::ostream& err);

struct StatsOptions {
  bool json = false;
};
int stats(const std::string& path, const StatsOptions& o, std::ostream& out, std::ostream& err);

int validate(const std::string& path, std::ostream& out, std::ostream& err);

struct DiffOptions {
  bool jobs = false;      // per-job table (start, finish, allocation)
  bool all_jobs = false;  // with jobs: every job, not only those that differ
  bool json = false;
  size_t max_listed = 10; // differing decisions listed one by one
};
int diff(const std::string& a, const std::string& b, const DiffOptions& o, std::ostream& out, std::ostream& err);

enum class ExportFormat { jobs_csv, perfetto, gantt };
struct ExportOptions {
  ExportFormat format = ExportFormat::jobs_csv;
  // "-" or "" writes to `out` (jobs-csv, perfetto). gantt: "" means TRACE's name with .png; the
  // extension (.png or .svg) picks the image format.
  std::string output;
};
int export_trace(const std::string& path, const ExportOptions& o, std::ostream& out, std::ostream& err);

// `output` "" means TRACE.zst.
int compress(const std::string& path, const std::string& output, std::ostream& out, std::ostream& err);

}  // namespace vtime::recorder::tools
