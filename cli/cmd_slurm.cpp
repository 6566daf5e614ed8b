// `vtime slurm`: `vtime run` with vtime-slurm as the scheduler (docs/slurm.md).
#include "command.h"
#include "companions.h"
#include "run_action.h"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace vtime::cli {
namespace {

// What a sleep of Slurm's daemons costs on a real machine beyond its length (timer slack and
// wake-up, measured on a 2-vCPU VM: ten 100 ms sleeps end 1.7-1.9 ms late). slurmctld starts
// pending jobs from a loop of ten 100 ms sleeps, whose real phase drifts by that much every
// second (1.69-1.76 ms/s in three real runs); which of a pass and a job's end comes first decides
// whether the next job starts in the same second or the one after (docs/slurm.md).
constexpr double kSlurmSleepLatencyNs = 170e3;

struct SlurmOptions {
  // Every other timed wait of the daemons ends late by Linux's default timer slack, as on the
  // real machine (no change on the kept references: bench/slurm_fit.py, docs/slurm.md).
  SlurmOptions() {
    run.broker.cpu.sleep_latency_ns = kSlurmSleepLatencyNs;
    run.broker.cpu.timer_slack_ns = kLinuxTimerSlackNs;
  }
  RunOptions run;
  std::string extra;
  std::vector<std::string> bridge_args;
};

int slurm_action(SlurmOptions& o) {
  std::string why;
  std::string bridge = find_slurm_bridge(why);
  if (bridge.empty()) {
    fprintf(stderr, "vtime slurm: %s\n", why.c_str());
    return kExitInternal;
  }
  o.run.command = {bridge, "-s", "{endpoint}"};
  // How often Slurm's daemons, and libslurm in the bridge, read the clock depends on how their
  // threads interleave and how the bytes of an RPC arrive (one read more per partial read); their
  // decisions do not. Traces of Slurm runs compare messages, decisions and timers, not clock reads.
  o.run.clock_ignore.push_back("proc:slurm*");
  o.run.clock_ignore.push_back("proc:vtime-slurm");
  if (!o.extra.empty()) {
    o.run.command.push_back("--slurm-conf");
    o.run.command.push_back(std::filesystem::absolute(o.extra).string());
  }
  o.run.command.insert(o.run.command.end(), o.bridge_args.begin(), o.bridge_args.end());
  return run_action(o.run);
}

}  // namespace

Subcommand register_slurm(CLI::App& root) {
  auto o = std::make_shared<SlurmOptions>();
  CLI::App* app = root.add_subcommand(
      "slurm",
      "Schedule the workload with a private, unmodified Slurm cluster in virtual time.\n"
      "Shorthand for `vtime run --sleep-latency 170us --timer-slack 50us ... -- vtime-slurm -s {endpoint} [--slurm-conf\n"
      "EXTRA] [ARGS]` (170us: a real kernel's wake-up latency, which Slurm's timing depends on): the\n"
      "workload is scheduled by a private, unmodified Slurm cluster (slurmctld and one slurmd per\n"
      "compute resource) in virtual time. Slurm's directory (slurm.conf, logs, state) is kept as\n"
      "PREFIX_slurm/. Same options and exit codes as `vtime run` (4: vtime-slurm failed, e.g. a\n"
      "Slurm daemon died; its message names the daemon). See docs/slurm.md.");
  add_run_options(*app, o->run);
  add_check_option(*app, o->run);
  app->add_option("--slurm-conf", o->extra,
                  "slurm.conf lines that override the generated ones (SchedulerType, SchedulerParameters, "
                  "Priority*, partitions, ...)")
      ->option_text("EXTRA")
      ->check(CLI::ExistingFile);
  app->add_option("bridge-args", o->bridge_args, "More vtime-slurm options (after --), e.g. --start-timeout 300");
  app->positionals_at_end(true);
  return {app, [o] { return slurm_action(*o); }};
}

}  // namespace vtime::cli
