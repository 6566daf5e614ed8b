// `vtime sim`: the embedded Batsim-4.2.1-compatible simulator (docs/sim.md).
#include <chrono>
#include <cstdio>
#include <string>

#include "command.h"
#include "self_usage.h"
#include "vtime/sim/simulator.h"

namespace vtime::cli {

namespace {

struct SimOptions {
  std::string platform;
  int hosts = 0;
  std::string workload;
  std::string prefix = "out";
  std::string endpoint = "tcp://localhost:28000";
  std::string master = "master_host";
  bool stats = false;
};

int run_sim(const SimOptions& o) {
  // First thing: a SIGTERM during start-up must still end in an orderly shutdown with outputs.
  sim::install_stop_signals();
  auto fail = [](const std::string& msg, int code) {
    std::fprintf(stderr, "vtime sim: %s\n", msg.c_str());
    return code;
  };
  auto platform = o.platform.empty() ? sim::make_platform(o.hosts, o.master)
                                     : sim::load_platform_xml(o.platform, o.master);
  if (!platform) return fail(platform.error(), kExitUsage);
  // Once, what the model leaves out of the platform (docs/sim.md, "Simulation model").
  for (const std::string& what : platform->ignored)
    std::fprintf(stderr, "vtime sim: note: %s\n", what.c_str());
  auto workload = sim::open_workload(o.workload, "w0");
  if (!workload) return fail(workload.error(), kExitUsage);
  auto peer = sim::ZmqPeer::connect(o.endpoint);
  if (!peer) return fail(peer.error(), kExitUsage);
  auto outputs = sim::Outputs::open(o.prefix);
  if (!outputs) return fail(outputs.error(), kExitUsage);

  // Exit codes: sim::exit_status (documented in docs/sim.md and in --help).
  auto t0 = std::chrono::steady_clock::now();
  sim::RunReport r = sim::simulate(*platform, **workload, **outputs, **peer);
  int code = sim::exit_status(r);
  if (o.stats) {
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "vtime sim: %zu jobs, %ld messages, simulated %s s in %.3f s of wall time; peak RSS %.1f MB\n",
                 (*workload)->size(), r.messages, protocol::format_seconds(r.end_time).c_str(), wall, peak_rss_mb());
  }
  return code == 0 ? 0 : fail(r.error, code);
}

}  // namespace

Subcommand register_sim(CLI::App& root) {
  auto opts = std::make_shared<SimOptions>();
  CLI::App* app = root.add_subcommand(
      "sim",
      "Embedded Batsim-4.2.1-compatible simulator: Batsim's own actors on a small model of\n"
      "SimGrid's kernel, so schedulers run with no Batsim installed and get Batsim's answers;\n"
      "internal messages cross the platform's network as in Batsim.\n"
      "It is NOT a replacement for SimGrid's models: jobs are 'delay', non-communicating parallel\n"
      "tasks and 'composed' sequences of those; no flow-level network sharing, no energy, no\n"
      "storage, no dynamic jobs (refused with the reason: use `vtime run --batsim`).\n"
      "It connects a ZeroMQ REQ socket to the scheduler's REP endpoint and speaks Batsim's JSON\n"
      "protocol, then writes PREFIX_jobs.csv and PREFIX_schedule.csv like Batsim.\n"
      "Quick start:\n"
      "  event_fcfs -s ipc:///tmp/sched.sock &\n"
      "  vtime sim --hosts 16 -w workload.json -e out -s ipc:///tmp/sched.sock\n"
      "Exit codes: 0 simulation completed; 2 bad command line or input file; 3 the scheduler\n"
      "sent an invalid reply (one line on stderr names the event; outputs keep what happened);\n"
      "4 stalled (jobs neither executed nor rejected and nothing pending); 5 ZeroMQ failure;\n"
      "128+N interrupted by signal N (130 SIGINT, 143 SIGTERM).");
  auto* plat = app->add_option("-p,--platform", opts->platform, "SimGrid platform XML file (hosts are numbered in name order, the master host is excluded)")
                   ->check(CLI::ExistingFile);
  auto* hosts = app->add_option("--hosts", opts->hosts, "Instead of -p: N compute hosts host0..host<N-1> plus master_host")
                    ->check(CLI::Range(1, 1000000));
  plat->excludes(hosts);
  hosts->excludes(plat);
  app->add_option("-w,--workload", opts->workload, "Batsim JSON workload (delay, non-communicating parallel and composed profiles)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("-e,--export", opts->prefix, "Output prefix: writes PREFIX_jobs.csv and PREFIX_schedule.csv")
      ->capture_default_str();
  app->add_option("-s,--socket-endpoint", opts->endpoint, "Scheduler's ZeroMQ REP endpoint to connect to")
      ->capture_default_str();
  app->add_option("-m,--master-host", opts->master, "Name of the master host (not a compute resource)")
      ->capture_default_str();
  app->add_flag("--stats", opts->stats, "At the end, one line on stderr: jobs, messages, simulated and wall time");
  app->callback([plat, hosts] {
    if (plat->count() == 0 && hosts->count() == 0) throw CLI::RequiredError("one of -p/--platform or --hosts");
  });
  return Subcommand{app, [opts] { return run_sim(*opts); }};
}

}  // namespace vtime::cli
