// `vtime trace`: show, check, compare and export decision traces (docs/trace-format.md). The
// work is done by vtime_trace_tools (vtime/recorder/tools.h); this file holds the options and
// their help text.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "vtime/recorder/tools.h"

namespace vtime::cli {

namespace {

namespace tools = vtime::recorder::tools;

constexpr const char* kExitCodes =
    "Exit codes: 0 ok; 1 the trace has problems (each printed as 'VTxxx line N: ...', the output\n"
    "covers the records recovered) or, for diff, the traces differ; 2 usage error; 3 the trace\n"
    "cannot be read at all (missing, not a trace, other format version); 4 the output cannot be\n"
    "written (or gnuplot is missing or failed); 125 internal error.";

struct TraceOptions {
  std::string trace, other, output, format = "jobs-csv";
  tools::ShowOptions show;
  uint64_t from = 0, to = 0;
  tools::StatsOptions stats;
  tools::DiffOptions diff;
};

// Every subcommand reads the trace the same way: a path, plain or .zst.
CLI::Option* add_trace(CLI::App* app, std::string& path, const char* name = "TRACE") {
  return app->add_option(name, path, "Trace file (plain or zstd-compressed .zst)")->required();
}

// A one-line summary (listed by `vtime trace --help`), the details and exit codes below the
// subcommand's own options.
CLI::App* add_command(CLI::App* parent, const char* name, const char* summary, const std::string& details) {
  CLI::App* app = parent->add_subcommand(name, summary);
  app->footer(details + "\n" + kExitCodes);
  return app;
}

}  // namespace

Subcommand register_trace(CLI::App& root) {
  auto o = std::make_shared<TraceOptions>();
  CLI::App* app = root.add_subcommand(
      "trace", "Show, check, compare and export decision traces written by `vtime run --record`");
  app->footer("Every subcommand reads plain and .zst traces (docs/trace-format.md).\n" + std::string(kExitCodes));
  app->require_subcommand(1);

  CLI::App* show = add_command(
      app, "show", "Print the records, one line each (or their JSON lines)",
      "One line per record: seq, simulated time (s), type and a summary (message direction and\n"
      "events, decision kind and job, timer op #id proc.thread wait deadline, clock advance\n"
      "from -> to, reason and waits woken, ...). The header is seq 0, the trailer last.");
  add_trace(show, o->trace);
  show->add_option("--type", o->show.types, "Only records of this type (repeatable)")
      ->check(CLI::IsMember(tools::record_type_names()));
  auto* from = show->add_option("--from", o->from, "First seq shown (the header is seq 0)");
  auto* to = show->add_option("--to", o->to, "Last seq shown");
  show->add_flag("--json", o->show.json, "Print the records' JSON lines instead of summaries");

  CLI::App* stats = add_command(
      app, "stats", "Count what a trace holds",
      "Records per type, messages per direction, simulated span, decisions per kind, jobs\n"
      "submitted/started/completed/rejected/killed, timers armed/fired/cancelled per wait kind,\n"
      "clock advances per reason, processes, how the run ended.");
  add_trace(stats, o->trace);
  stats->add_flag("--json", o->stats.json, "Print one JSON object");

  CLI::App* validate = add_command(
      app, "validate", "Check a trace and report every problem with its code",
      "Checks the header, every line, the sequence, each record's fields, the trailer's counts\n"
      "and digest. Prints every problem as 'VTxxx line N: message' (codes: docs/trace-format.md),\n"
      "then one verdict line (for a cut-short trace: how many records were recovered).\n"
      "Exits 0 only when the trace is complete and sound.");
  add_trace(validate, o->trace);

  CLI::App* diff = add_command(
      app, "diff", "Compare two traces",
      "Header differences (options, inputs, scheduler), the first differing record with the JSON\n"
      "path of the first difference (inside a message's parsed bytes: bytes$...), decisions\n"
      "aligned by (kind, job) with counts of those that differ, the jobs that start or finish\n"
      "differently. Exits 0 when the traces are identical, 1 when they differ.");
  add_trace(diff, o->trace, "A");
  diff->add_option("B", o->other, "The trace to compare with")->required();
  diff->add_flag("--jobs", o->diff.jobs, "Print a per-job table: start, finish (A, B, delta) and allocation");
  diff->add_flag("--all", o->diff.all_jobs, "With --jobs: every job, not only those that differ");
  diff->add_flag("--json", o->diff.json, "Print one JSON object");
  diff->add_option("--max", o->diff.max_listed, "Differing decisions listed one by one")->capture_default_str();

  CLI::App* exp = add_command(
      app, "export", "Export a trace as jobs-csv, perfetto or a gantt chart",
      "Formats:\n"
      "  jobs-csv  the run's PREFIX_jobs.csv (Batsim/evalys), byte for byte, rebuilt from the messages\n"
      "  perfetto  Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing: a track per\n"
      "            machine with its jobs, every message with its bytes, timers as spans from arm\n"
      "            to fire/cancel, clock advances, processes\n"
      "  gantt     a PNG or SVG Gantt chart of jobs over resources, drawn by gnuplot (gnuplot-nox)");
  add_trace(exp, o->trace);
  exp->add_option("-f,--format", o->format, "jobs-csv, perfetto or gantt")
      ->required()
      ->check(CLI::IsMember({"jobs-csv", "perfetto", "gantt"}));
  exp->add_option("-o,--output", o->output,
                  "Output file; '-' is stdout. Default: stdout for jobs-csv and perfetto, TRACE.png for\n"
                  "gantt (a .zst suffix dropped first); the gantt format follows the extension (.png, .svg)");

  CLI::App* comp = add_command(
      app, "compress", "Compress a trace with zstd",
      "Writes independent zstd frames of whole lines: every command reads the result, and a cut\n"
      "copy still yields its complete frames.");
  add_trace(comp, o->trace);
  comp->add_option("-o,--output", o->output, "Output file (default: TRACE.zst)");

  auto run = [o, show, stats, validate, diff, exp, comp, from, to]() -> int {
    try {
      if (from->count()) o->show.from = o->from;
      if (to->count()) o->show.to = o->to;
      if (show->parsed()) return tools::show(o->trace, o->show, std::cout, std::cerr);
      if (stats->parsed()) return tools::stats(o->trace, o->stats, std::cout, std::cerr);
      if (validate->parsed()) return tools::validate(o->trace, std::cout, std::cerr);
      if (diff->parsed()) return tools::diff(o->trace, o->other, o->diff, std::cout, std::cerr);
      if (exp->parsed()) {
        tools::ExportOptions e;
        e.format = o->format == "perfetto" ? tools::ExportFormat::perfetto
                   : o->format == "gantt"  ? tools::ExportFormat::gantt
                                           : tools::ExportFormat::jobs_csv;
        e.output = o->output;
        return tools::export_trace(o->trace, e, std::cout, std::cerr);
      }
      if (comp->parsed()) return tools::compress(o->trace, o->output, std::cout, std::cerr);
    } catch (const std::exception& e) {
      // The tools report bad input themselves; reaching here is a bug in vtime.
      std::cerr << "vtime trace: internal error: " << e.what() << "\n";
      return kExitInternal;
    }
    return kExitUsage;
  };
  return Subcommand{app, run};
}

}  // namespace vtime::cli
