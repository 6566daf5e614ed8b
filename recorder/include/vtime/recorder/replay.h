// Replay: plays a recorded simulator side to a scheduler under the virtual clock, without any
// simulator, and compares every record the run makes with the trace; stops at the first
// divergence and says where, what and why.
//
// Example (what `vtime replay` does):
//     ReplayOptions o;
//     o.trace = "run.trace";
//     o.scheduler = {"./periodic_fcfs", "-s", "{endpoint}", "--period", "2"};
//     o.broker.shim_path = find_shim();   // + the recorded options (cli/broker_options.h)
//     ReplayResult r = replay(o);        // r.exit_code: kReplay* below
//     puts(r.report_text.c_str());
#pragma once

#include <vtime/broker/broker.h>
#include <vtime/recorder/trace.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vtime::recorder {

// Exit codes of `vtime replay` (docs/cli.md).
inline constexpr int kReplayOk = 0;          // every record matched (or up to a cut, with a warning)
inline constexpr int kReplayDiverged = 1;    // the run diverged from the trace: see the report
inline constexpr int kReplayUsage = 2;
inline constexpr int kReplayRefused = 8;     // not a trace, another format version, changed inputs
inline constexpr int kReplayInternal = 125;

struct ReplayOptions {
  std::string trace;
  std::vector<std::string> scheduler;  // empty: the recorded command; "{endpoint}" substituted
  // The broker's options as the recording had them (the caller reads them from the header's
  // "options"), with shim_path set. Endpoints, command, recorder and port are set by replay().
  broker::Options broker;
  std::optional<uint64_t> stop_at;     // pause the scheduler's tree once record SEQ matched
  bool force = false;                  // warn instead of refusing another version or changed inputs
  // What is compared (docs/cli.md, --compare):
  //   kAll        every record;
  //   kDecisions  the messages exchanged with the simulator and the scheduler, the scheduler's
  //               decisions and errors: timer, advance, clock and process records are neither
  //               compared nor required. For schedulers whose threads race within one virtual
  //               instant (Slurm), where the timers differ from run to run while what they
  //               decide does not;
  //   kScheduler  what the scheduler is told and answers, its decisions and errors, with
  //               `simulator` (required) answering instead of the recorded simulator side. For
  //               runs where the broker's own CALL_ME_LATERs (the wrapped components' timers)
  //               differ from run to run (Kubernetes): the simulator answers the run's own.
  enum class Compare { kAll, kDecisions, kScheduler };
  Compare compare = Compare::kAll;
  // kScheduler: the simulator, started from the trace's recorded inputs by the caller (the CLI's
  // embedded simulator); replay() only talks to it.
  broker::BatsimPort* simulator = nullptr;
  // Called with the pause message; must return once the user asked to resume. Default: wait
  // for Enter on stdin or SIGUSR1 (the caller blocks SIGUSR1 before any thread starts).
  std::function<void(const std::string&)> on_pause;
};

struct ReplayResult {
  int exit_code = kReplayOk;
  bool diverged = false;
  bool complete = true;          // false: the trace was cut short, replayed up to the cut
  uint64_t records_matched = 0;
  std::vector<std::string> warnings;
  Json report;                   // the --report json document
  std::string report_text;       // the same for people
};

ReplayResult replay(const ReplayOptions& o);

// The first place two JSON values differ, as a JSON pointer ("" when equal at the root;
// nullopt when equal). Strings holding JSON objects or arrays (a message's "bytes") are compared
// as parsed JSON, their path continuing inside.
struct JsonDifference {
  std::string path;
  Json expected;
  Json actual;
};
std::optional<JsonDifference> first_difference(const Json& expected, const Json& actual);

}  // namespace vtime::recorder
