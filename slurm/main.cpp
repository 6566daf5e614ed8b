// vtime-slurm: a Batsim scheduler that is Debian's unmodified Slurm (docs/slurm.md).
//
//   vtime run -p PLATFORM -w WORKLOAD -e PREFIX -- vtime-slurm -s {endpoint} [--slurm-conf EXTRA]
//
// Exit codes: 0 done; 1 a Slurm daemon failed (named, with the end of its log); 2 bad command
// line, EXTRA file or directory; 3 invalid message from Batsim or ZeroMQ error.
// Run as "vtime-slurm --job-agent SCRIPT" it is the interpreter of every job's script
// (agent_link.h): not for users.
#include "agent_link.h"
#include "bridge.h"
#include "duration_option.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--job-agent") == 0) return vtime::slurm::job_agent_main();

  vtime::slurm::BridgeOptions o;
  o.endpoint = "tcp://*:28000";
  if (const char* prefix = std::getenv("VTIME_OUTPUT_PREFIX"); prefix && *prefix) {
    o.dir = std::string(prefix) + "_slurm";
  }
  CLI::App app{
      "vtime-slurm: a Batsim scheduler whose decisions are Slurm's. Runs a private Slurm cluster\n"
      "(Debian's slurmctld and one slurmd per compute resource) as its own children, submits every\n"
      "Batsim job to it and reports the starts Slurm decides. Meant to run under `vtime run` (or\n"
      "`vtime slurm`), so that Slurm lives in virtual time. Exit status: 0 done; 1 a Slurm daemon\n"
      "failed; 2 bad command line, EXTRA file or directory; 3 invalid message from Batsim. See\n"
      "docs/slurm.md."};
  app.add_option("-s,--socket-endpoint", o.endpoint, "ZeroMQ endpoint to bind (REP)")->capture_default_str();
  app.add_option("--slurm-conf", o.extra_path,
                 "EXTRA: slurm.conf lines (SchedulerType, SchedulerParameters, Priority*, partitions, ...) that "
                 "override the generated ones")
      ->option_text("EXTRA");
  app.add_option("--dir", o.dir,
                 "Slurm's directory for this run: slurm.conf, state, spool, logs, job records (default: "
                 "PREFIX_slurm under `vtime run -e PREFIX`)")
      ->option_text("DIR");
  app.add_option("--start-timeout", o.start_timeout_s, "Virtual seconds the cluster may take to come up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--settle", o.settle_s,
                 "Virtual seconds from slurmctld's start to Batsim's time 0 (less 50 ms): the workload meets a "
                 "cluster that has been up a while, as a real one has (docs/slurm.md)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  std::string order = "natural";
  app.add_option("--submit-order", order,
                 "Order of jobs due at one instant: natural (numeric ids: 9 before 10, as a person replaying "
                 "a trace submits them) or batsim (Batsim's order: string order of ids)")
      ->capture_default_str()
      ->check(CLI::IsMember({"natural", "batsim"}));
  vtime::bridges::add_duration_option(app, "--job-start-latency", o.job_start_latency_ns,
                                      "Virtual time from Slurm starting a job to the job's work starting: a real job's "
                                      "launch and teardown (docs/slurm.md)",
                                      "17ms");
  app.set_version_flag("--version", "vtime-slurm " VTIME_VERSION);
  // `vtime validate --bridge-arg` checks the user's options this way before its real-time runs,
  // which take minutes, rather than finding a typo after them.
  bool check_only = false;
  app.add_flag("--check", check_only, "Check the command line and exit (0: it would be accepted)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : vtime::slurm::kBridgeUsage;
  }
  o.natural_order = order == "natural";
  if (check_only) return 0;
  if (o.dir.empty()) {
    std::fprintf(stderr, "vtime-slurm: give --dir DIR (or run it under `vtime run -e PREFIX`)\n");
    return vtime::slurm::kBridgeUsage;
  }
  std::error_code ec;
  o.self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) {
    std::fprintf(stderr, "vtime-slurm: cannot find its own executable: %s\n", ec.message().c_str());
    return vtime::slurm::kBridgeSlurmFailed;
  }
  return vtime::slurm::run_bridge(o);
}
