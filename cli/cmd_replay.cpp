// `vtime replay`: a recorded run played back to a scheduler without any simulator, compared
// record by record (recorder/include/vtime/recorder/replay.h).
#include "broker_options.h"
#include "command.h"
#include "companions.h"
#include "embedded_sim.h"

#include <vtime/recorder/replay.h>

#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace vtime::cli {
namespace {

struct ReplayArgs {
  std::string trace;
  std::optional<uint64_t> stop_at;
  std::string report = "text";
  bool force = false;
  std::optional<double> crash_timeout;
  std::optional<double> start_timeout;
  std::optional<std::string> cpu_model;
  std::string compare = "all";
  std::vector<std::string> command;
};

int replay_action(const ReplayArgs& a) {
  // --stop-at resumes on SIGUSR1 read from a signalfd: block it before any thread starts, so
  // that every thread (ZeroMQ's too) leaves it to the signalfd.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  if (a.cpu_model && !parse_cpu_model(*a.cpu_model)) {
    fprintf(stderr, "vtime replay: %s\n", cpu_model_error(*a.cpu_model).c_str());
    return kExitUsage;
  }
  recorder::ReplayOptions o;
  o.trace = a.trace;
  o.scheduler = a.command;
  // CLI11 keeps the separator in an optional trailing positional.
  if (!o.scheduler.empty() && o.scheduler.front() == "--") o.scheduler.erase(o.scheduler.begin());
  o.stop_at = a.stop_at;
  o.force = a.force;
  o.compare = a.compare == "decisions"   ? recorder::ReplayOptions::Compare::kDecisions
              : a.compare == "scheduler" ? recorder::ReplayOptions::Compare::kScheduler
                                         : recorder::ReplayOptions::Compare::kAll;
  std::string err;
  // --compare scheduler: the embedded simulator runs again from the recorded inputs.
  std::string platform, workload;
  int hosts = 0;
  {
    auto r = recorder::TraceReader::open(a.trace, &err, a.force);
    if (!r) {
      fprintf(stderr, "vtime replay: %s\n", err.c_str());
      return recorder::kReplayRefused;
    }
    BrokerOptions bo;
    try {
      bo = broker_options_from_json(r->header().value("options", recorder::Json::object()));
    } catch (const nlohmann::json::exception& e) {
      // A member of another type than vtime writes (a trace edited or corrupted by hand).
      fprintf(stderr, "vtime replay: the trace's options are malformed: %s\n", e.what());
      return recorder::kReplayRefused;
    }
    const auto& h = r->header();
    auto opts = h.value("options", recorder::Json::object());
    if (o.compare == recorder::ReplayOptions::Compare::kScheduler) {
      if (opts.value("simulator", std::string()) != "embedded") {
        fprintf(stderr, "vtime replay: --compare scheduler runs the embedded simulator again, and this trace was not "
                        "recorded with it (real Batsim, or an older trace)\n");
        return recorder::kReplayRefused;
      }
      if (opts.contains("hosts") && opts["hosts"].is_number_integer()) hosts = opts["hosts"].get<int>();
      if (h.contains("inputs") && h["inputs"].is_array()) {
        for (auto& in : h["inputs"]) {
          if (!in.is_object()) continue;
          if (in.value("role", "") == "platform") platform = in.value("path", "");
          if (in.value("role", "") == "workload") workload = in.value("path", "");
        }
      }
      if (workload.empty() || (platform.empty() && hosts <= 0)) {
        fprintf(stderr, "vtime replay: the trace names no workload or platform to simulate again\n");
        return recorder::kReplayRefused;
      }
    }
    if (a.crash_timeout) bo.crash_timeout = *a.crash_timeout;
    if (a.start_timeout) bo.start_timeout = *a.start_timeout;
    if (a.cpu_model) bo.cpu.model = *a.cpu_model;
    if (!to_broker(bo, o.broker, &err)) {
      fprintf(stderr, "vtime replay: the trace's options: %s\n", err.c_str());
      return recorder::kReplayRefused;
    }
  }
  std::string why;
  o.broker.shim_path = find_shim(why);
  if (o.broker.shim_path.empty()) {
    fprintf(stderr, "vtime replay: %s\n", why.c_str());
    return recorder::kReplayInternal;
  }
  std::unique_ptr<EmbeddedSimulator> simulator;
  std::string sim_dir;
  if (o.compare == recorder::ReplayOptions::Compare::kScheduler) {
    char dir_template[] = "/tmp/vtime-replay-sim-XXXXXX";
    if (!mkdtemp(dir_template)) {
      perror("vtime replay: mkdtemp");
      return recorder::kReplayInternal;
    }
    sim_dir = dir_template;
    // Inputs changed since the recording are refused by replay() (or warned about with --force).
    simulator = make_embedded_simulator(platform, hosts, workload, sim_dir + "/out", true, "vtime replay");
    if (!simulator) {
      std::error_code ec;
      std::filesystem::remove_all(sim_dir, ec);
      return recorder::kReplayRefused;
    }
    o.simulator = simulator.get();
  }
  recorder::ReplayResult res = recorder::replay(o);
  if (simulator) {
    simulator->finish();
    std::error_code ec;
    std::filesystem::remove_all(sim_dir, ec);
  }
  if (a.report == "json") {
    printf("%s\n", res.report.dump(2, ' ', false, recorder::Json::error_handler_t::replace).c_str());
  } else {
    fputs(res.report_text.c_str(), res.exit_code == recorder::kReplayOk || res.diverged ? stdout : stderr);
  }
  return res.exit_code;
}

}  // namespace

Subcommand register_replay(CLI::App& root) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* app = root.add_subcommand(
      "replay",
      "Replay a recorded run without a simulator, up to the first divergence.\n"
      "Play a recorded trace (vtime run --record) back to SCHEDULER under the virtual clock, with no\n"
      "simulator, and compare every message, decision, timer, clock advance and clock-read digest\n"
      "with the trace. Stops at the first divergence and reports it. SCHEDULER defaults to the\n"
      "recorded command; '{endpoint}' in it is the endpoint to bind. The recorded options (sync\n"
      "policy, decision time, ...) are used. Exit status: 0 no divergence (a cut trace: up to the\n"
      "cut, with a warning); 1 divergence; 2 usage; 8 not a trace, another format version or\n"
      "changed inputs (see --force); 125 internal error.");
  app->add_option("trace", a->trace, "The trace (plain or .zst)")->required();
  app->add_option("--stop-at", a->stop_at,
                  "Pause the whole scheduler once record SEQ matched; prints its pids for gdb -p; resumes on "
                  "Enter or SIGUSR1");
  app->add_option("--report", a->report, "text (default) or json (the report on stdout as one JSON document)")
      ->check(CLI::IsMember({"text", "json"}));
  app->add_flag("--force", a->force, "Replay a trace of another format version or with changed inputs (warns)");
  app->add_option("--crash-timeout", a->crash_timeout, "Real seconds the scheduler may stay busy (default: recorded)");
  app->add_option("--start-timeout", a->start_timeout,
                  "Real seconds the scheduler may take to start; 0: the crash timeout (default: recorded)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--cpu-model", a->cpu_model,
                  "CPU-time model to replay under: zero, calls or real (default: the recorded one; see vtime exec)");
  app->add_option("--compare", a->compare,
                  "all (default): every record; decisions: the messages exchanged with the simulator and the "
                  "scheduler's decisions only, not timers, advances, clock digests or processes (schedulers whose "
                  "threads race within one instant: Slurm); scheduler: what the scheduler is told and answers and "
                  "its decisions, with the embedded simulator run again from the recorded inputs answering the "
                  "broker instead of the trace (runs whose components' timers make the broker's own CALL_ME_LATERs "
                  "differ: Kubernetes)")
      ->check(CLI::IsMember({"all", "decisions", "scheduler"}));
  app->add_option("scheduler", a->command, "The scheduler command and its arguments (after --)");
  return {app, [a] { return replay_action(*a); }};
}

}  // namespace vtime::cli
