// `vtime run`: a real-time scheduler against a Batsim simulation, under the virtual clock.
#include "broker_options.h"
#include "command.h"
#include <vtime/recorder/recording.h>
#include "epoch.h"
#include "shim_path.h"

#include <vtime/broker/broker.h>
#include <vtime/session.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace vtime::cli {
namespace {

struct RunOptions {
  std::string platform;
  int hosts = 0;
  std::string workload;
  std::string prefix = "out";
  std::string batsim;
  BrokerOptions broker;
  std::string record;
  bool compress = false;
  bool quiet = false;
  std::vector<std::string> command;
};

std::map<std::string, std::string> read_schedule(const std::string& path) {
  std::ifstream in(path);
  std::string header, values;
  std::map<std::string, std::string> out;
  if (!std::getline(in, header) || !std::getline(in, values)) return out;
  std::stringstream h(header), v(values);
  std::string k, x;
  while (std::getline(h, k, ',') && std::getline(v, x, ',')) out[k] = x;
  return out;
}

pid_t start_simulator(const RunOptions& o, const std::string& endpoint) {
  std::vector<std::string> argv;
  if (!o.batsim.empty()) {
    argv = {"/bin/sh", "-c", o.batsim + " -s '" + endpoint + "'"};
  } else {
    argv = {"/proc/self/exe", "sim", "-e", o.prefix, "-s", endpoint};
    if (!o.platform.empty()) {
      argv.insert(argv.end(), {"-p", o.platform});
    } else {
      argv.insert(argv.end(), {"--hosts", std::to_string(o.hosts)});
    }
    argv.insert(argv.end(), {"-w", o.workload});
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    perror("vtime run: cannot start the simulator");
    _exit(125);
  }
  return pid;
}

int run_action(const RunOptions& o) {
  std::string why;
  std::string shim = find_shim(why);
  if (shim.empty()) {
    fprintf(stderr, "vtime run: %s\n", why.c_str());
    return kExitInternal;
  }
  if (o.batsim.empty() && o.platform.empty() && o.hosts <= 0) {
    fprintf(stderr, "vtime run: give a platform (-p FILE) or a host count (--hosts N)\n");
    return kExitUsage;
  }
  if (o.batsim.empty() && o.workload.empty()) {
    fprintf(stderr, "vtime run: give a workload (-w FILE)\n");
    return kExitUsage;
  }
  broker::Options b;
  std::string bad;
  if (!to_broker(o.broker, b, &bad)) {
    fprintf(stderr, "vtime run: %s\n", bad.c_str());
    return kExitUsage;
  }
  b.shim_path = shim;

  // Private endpoints: parallel runs never collide.
  char dir_template[] = "/tmp/vtime-run-XXXXXX";
  if (!mkdtemp(dir_template)) {
    perror("vtime run: mkdtemp");
    return kExitInternal;
  }
  std::string dir = dir_template;
  b.batsim_endpoint = "ipc://" + dir + "/batsim";
  b.scheduler_endpoint = "ipc://" + dir + "/scheduler";
  b.scheduler_command = o.command;  // the broker puts the endpoint in for "{endpoint}"
  bool tty = isatty(2) && !o.quiet;
  if (tty) b.progress = [](const std::string& line) { fprintf(stderr, "\r\033[K%s", line.c_str()); };

  std::unique_ptr<recorder::Recording> recording;
  if (!o.record.empty()) {
    recorder::RecordingSetup rs;
    rs.path = o.record;
    rs.command = "run";
    rs.options = to_json(o.broker);
    rs.options["simulator"] = o.batsim.empty() ? "embedded" : o.batsim;
    if (o.batsim.empty() && o.platform.empty()) rs.options["hosts"] = o.hosts;
    if (!o.platform.empty()) rs.inputs.emplace_back("platform", o.platform);
    if (!o.workload.empty()) rs.inputs.emplace_back("workload", o.workload);
    rs.scheduler = o.command;
    rs.epoch_ns = b.epoch_ns;
    rs.endpoints = {{"batsim", b.batsim_endpoint}, {"scheduler", b.scheduler_endpoint}};
    std::string err;
    recording = recorder::Recording::start(rs, &err);
    if (!recording) {
      fprintf(stderr, "vtime run: %s\n", err.c_str());
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      return kExitUsage;
    }
    b.recorder = &recording->recorder();
  }

  auto wall_start = std::chrono::steady_clock::now();
  pid_t sim = start_simulator(o, b.batsim_endpoint);
  b.batsim_pid = sim;
  if (recording) recording->set_pid("simulator", sim);
  broker::Summary summary;
  int code = broker::run(b, &summary);
  if (tty) fprintf(stderr, "\r\033[K");
  int sim_status = 0;
  if (code != broker::kExitOk) kill(sim, SIGTERM);
  // The simulator writes its outputs and exits once SIMULATION_ENDS is answered (or on SIGTERM);
  // never wait for it forever.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(sim, &sim_status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      fprintf(stderr, "vtime run: the simulator did not exit 30 s after the end of the conversation; killing it\n");
      kill(sim, SIGKILL);
      waitpid(sim, &sim_status, 0);
      if (code == broker::kExitOk) code = broker::kExitBatsimError;
      break;
    }
    usleep(10000);
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (recording && !recording->end(wall, o.compress)) code = code ? code : kExitInternal;
  if (code == broker::kExitOk && !(WIFEXITED(sim_status) && WEXITSTATUS(sim_status) == 0)) {
    fprintf(stderr, "vtime run: the simulator failed (status %d)\n", sim_status);
    return WIFEXITED(sim_status) ? WEXITSTATUS(sim_status) : kExitInternal;
  }
  if (code != broker::kExitOk) return code;
  if (!o.quiet && o.batsim.empty()) {
    auto s = read_schedule(o.prefix + "_schedule.csv");
    double sim_time = static_cast<double>(summary.end_time.ns()) / 1e9;
    fprintf(stderr,
            "vtime run: makespan %s s, mean waiting time %s s, %s jobs (%s rejected, %s killed), simulated %.6f s in "
            "%.3f s of wall time (speed-up x%.0f); %llu messages, %llu ticks\n",
            s["makespan"].c_str(), s["mean_waiting_time"].c_str(), s["nb_jobs"].c_str(), s["nb_jobs_rejected"].c_str(),
            s["nb_jobs_killed"].c_str(), sim_time, wall, wall > 0 ? sim_time / wall : 0.0,
            static_cast<unsigned long long>(summary.batsim_messages),
            static_cast<unsigned long long>(summary.ticks));
  }
  return 0;
}

}  // namespace

Subcommand register_run(CLI::App& root) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = root.add_subcommand(
      "run",
      "Run a real-time SCHEDULER against a Batsim simulation under the virtual clock: starts the\n"
      "embedded simulator (or --batsim), the broker, and SCHEDULER under the shim. '{endpoint}' in\n"
      "the scheduler's arguments (and VTIME_SCHED_ENDPOINT in its environment) is the ZeroMQ\n"
      "endpoint it must bind (REP). Exit status: 0 done; 2 usage; 3 the scheduler sent an invalid\n"
      "reply; 4 it exited or crashed before the end; 5 it stayed busy past --crash-timeout; 6 it is\n"
      "blocked forever without replying; 7 the simulator failed; 125 internal error.");
  app->add_option("-p,--platform", o->platform, "SimGrid platform XML for the embedded simulator");
  app->add_option("--hosts", o->hosts, "Instead of -p: N identical compute hosts");
  app->add_option("-w,--workload", o->workload, "Batsim JSON workload");
  app->add_option("-e,--export", o->prefix, "Output prefix (PREFIX_jobs.csv, PREFIX_schedule.csv)")->capture_default_str();
  app->add_option("--batsim", o->batsim, "A real Batsim command line to use instead of the embedded simulator "
                                         "(its -s endpoint is appended)");
  add_broker_options(*app, o->broker);
  app->add_option("--record", o->record, "write a decision trace of the run to TRACE (docs/trace-format.md)")
      ->option_text("TRACE");
  app->add_flag("--compress", o->compress, "with --record: compress the finished trace with zstd (TRACE.zst)");
  app->add_flag("-q,--quiet", o->quiet, "no progress line and no summary");
  app->add_option("scheduler", o->command, "The scheduler command and its arguments (after --)")->required();
  app->positionals_at_end(true);
  return {app, [o] { return run_action(*o); }};
}

}  // namespace vtime::cli
