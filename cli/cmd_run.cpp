// `vtime run`: a real-time scheduler against a Batsim simulation, under the virtual clock.
#include "run_action.h"
#include "child_output.h"
#include "command.h"
#include "self_usage.h"
#include <vtime/recorder/recording.h>
#include "embedded_sim.h"
#include "epoch.h"
#include "companions.h"
#include "cpu_pin.h"

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
#include <optional>
#include <sstream>

namespace vtime::cli {
namespace {

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

// Real Batsim (--batsim): its own process, with our endpoint appended as its -s.
pid_t start_batsim(const RunOptions& o, const std::string& endpoint) {
  std::vector<std::string> argv = {"/bin/sh", "-c", o.batsim + " -s '" + endpoint + "'"};
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    perror("vtime run: cannot start Batsim");
    _exit(125);
  }
  return pid;
}

// Waits for Batsim to exit after the conversation (it exits once SIMULATION_ENDS is answered;
// on a failure it was sent SIGTERM), never forever. Returns its wait status; *killed when it
// had to be killed.
int reap_batsim(pid_t pid, bool* killed) {
  int status = 0;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      fprintf(stderr, "vtime run: Batsim did not exit 30 s after the end of the conversation; killing it\n");
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      *killed = true;
      break;
    }
    usleep(10000);
  }
  return status;
}

// The bridge's own check of its options (its --check): 0 when it takes them, else kExitUsage
// after what it said.
int check_scheduler_options(const std::vector<std::string>& command) {
  std::vector<std::string> args = {"--check"};
  args.insert(args.end(), command.begin() + 1, command.end());
  const ChildOutput r = run_capturing(command[0], args, true);
  if (!r.ran) {
    perror("vtime: cannot run the scheduler's check");
    return kExitInternal;
  }
  fputs(r.out.c_str(), stderr);
  return r.ok() ? 0 : kExitUsage;
}

}  // namespace

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
  if (!valid_pin_cpu(o.pin_cpu, &bad)) {
    fprintf(stderr, "vtime run: %s\n", bad.c_str());
    return kExitUsage;
  }
  if (o.check_only) return check_scheduler_options(o.command);
  // Before any thread or process of the run exists: they all inherit the CPU.
  std::optional<CpuPin> pin = pin_cpu(o.pin_cpu, kDefaultCpuLockDir, &bad);
  if (!pin) {
    fprintf(stderr, "vtime run: %s\n", bad.c_str());
    return kExitUsage;
  }

  // Private endpoints: parallel runs never collide.
  char dir_template[] = "/tmp/vtime-run-XXXXXX";
  if (!mkdtemp(dir_template)) {
    perror("vtime run: mkdtemp");
    return kExitInternal;
  }
  std::string dir = dir_template;
  // The embedded simulator runs in this process (embedded_sim.h); SIGINT/SIGTERM then end it in
  // order, so its outputs keep what happened.
  std::unique_ptr<EmbeddedSimulator> embedded;
  if (o.batsim.empty()) {
    embedded = make_embedded_simulator(o.platform, o.hosts, o.workload, o.prefix, o.quiet, "vtime run");
    if (!embedded) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      return kExitUsage;
    }
  }
  b.batsim_endpoint = "ipc://" + dir + "/batsim";
  b.scheduler_endpoint = "ipc://" + dir + "/scheduler";
  b.scheduler_command = o.command;  // the broker puts the endpoint in for "{endpoint}"
  // Schedulers that keep files of their own (vtime-slurm's Slurm directory) put them beside the
  // outputs.
  b.scheduler_env.emplace_back("VTIME_OUTPUT_PREFIX", std::filesystem::absolute(o.prefix).string());
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
    rs.ignored_threads = o.clock_ignore;
    rs.endpoints = {{"scheduler", b.scheduler_endpoint}};
    if (!o.batsim.empty()) rs.endpoints.emplace_back("batsim", b.batsim_endpoint);
    std::string err;
    recording = recorder::Recording::start(rs, &err);
    if (!recording) {
      fprintf(stderr, "vtime run: %s\n", err.c_str());
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      return kExitUsage;
    }
    b.observer = &recording->recorder();
  }

  auto wall_start = std::chrono::steady_clock::now();
  broker::Summary summary;
  int code;
  if (embedded) {
    b.batsim_port = embedded.get();
    code = broker::run(b, &summary);
    if (tty) fprintf(stderr, "\r\033[K");
    // The simulator writes its outputs and ends once SIMULATION_ENDS is answered; after a
    // failure it is told the conversation is over and writes what happened so far.
    int sim_code = embedded->finish();
    if (sim_code != 0 && code == broker::kExitOk) {
      // Its outputs could not be written (a full disk): the simulator failed, exit 7; its own
      // status (vtime sim's 2) would read as a usage error here.
      fprintf(stderr, "vtime run: the simulator failed: %s\n", embedded->error().c_str());
      code = broker::kExitBatsimError;
    } else if (sim_code != 0 && !embedded->error().empty()) {
      fprintf(stderr, "vtime run: the simulator also failed: %s\n", embedded->error().c_str());
    }
  } else {
    pid_t batsim = start_batsim(o, b.batsim_endpoint);
    b.batsim_pid = batsim;
    if (recording) recording->set_pid("simulator", batsim);
    code = broker::run(b, &summary);
    if (tty) fprintf(stderr, "\r\033[K");
    if (code != broker::kExitOk) kill(batsim, SIGTERM);
    bool killed = false;
    int st = reap_batsim(batsim, &killed);
    if (code == broker::kExitOk && (killed || !(WIFEXITED(st) && WEXITSTATUS(st) == 0))) {
      fprintf(stderr, "vtime run: Batsim failed (status %d)\n", st);
      code = killed ? broker::kExitBatsimError : WIFEXITED(st) ? WEXITSTATUS(st) : kExitInternal;
    }
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (recording && !recording->end(wall, o.compress)) code = code ? code : kExitInternal;
  if (code != broker::kExitOk) return code;
  if (!o.quiet) {
    // The same line with real Batsim (--batsim): its _schedule.csv has the same columns.
    auto s = read_schedule(o.prefix + "_schedule.csv");
    double sim_time = static_cast<double>(summary.end_time.ns()) / 1e9;
    fprintf(stderr,
            "vtime run: makespan %s s, mean waiting time %s s, %s jobs (%s rejected, %s killed), simulated %.6f s in "
            "%.3f s of wall time (speed-up x%.0f); %llu messages, %llu ticks, %llu advances%s; peak RSS %.1f MB; "
            "vtime's own CPU %.3f s\n",
            s["makespan"].c_str(), s["mean_waiting_time"].c_str(), s["nb_jobs"].c_str(), s["nb_jobs_rejected"].c_str(),
            s["nb_jobs_killed"].c_str(), sim_time, wall, wall > 0 ? sim_time / wall : 0.0,
            static_cast<unsigned long long>(summary.batsim_messages),
            static_cast<unsigned long long>(summary.ticks), static_cast<unsigned long long>(summary.advances),
            summary.handovers ? (", " + std::to_string(summary.handovers) + " hand-overs").c_str() : "", peak_rss_mb(),
            own_cpu_s());
  }
  return 0;
}

void add_check_option(CLI::App& app, RunOptions& o) {
  app.add_flag("--check", o.check_only,
               "Check the options, vtime's and the bridge's, and exit without running anything: 0 accepted, 2 not");
}

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("-p,--platform", o.platform, "SimGrid platform XML for the embedded simulator");
  app.add_option("--hosts", o.hosts, "Instead of -p: N identical compute hosts");
  app.add_option("-w,--workload", o.workload, "Batsim JSON workload");
  app.add_option("-e,--export", o.prefix, "Output prefix (PREFIX_jobs.csv, PREFIX_schedule.csv)")->capture_default_str();
  app.add_option("--batsim", o.batsim, "A real Batsim command line to use instead of the embedded simulator "
                                       "(its -s endpoint is appended)");
  add_broker_options(app, o.broker);
  app.add_option("--record", o.record, "write a decision trace of the run to TRACE (docs/trace-format.md)")
      ->option_text("TRACE");
  app.add_flag("--compress", o.compress, "with --record: compress the finished trace with zstd (TRACE.zst)");
  app.add_option("--clock-ignore", o.clock_ignore,
                 "with --record: leave the clock reads of threads named PATTERN (fnmatch), or of whole "
                 "processes with proc:PATTERN, out of the trace (their count depends on thread interleavings)")
      ->option_text("PATTERN");
  app.add_flag("-q,--quiet", o.quiet, "no progress line and no summary");
  app.add_option("--pin-cpu", o.pin_cpu,
                 "run vtime and the whole tree on one CPU: auto (one no other pinned run holds), a CPU "
                 "number, or off. Faster for a tree that runs one thread at a time (default: auto for vtime k8s, "
                 "off otherwise)")
      ->option_text("auto|N|off")
      ->capture_default_str();
}

Subcommand register_run(CLI::App& root) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = root.add_subcommand(
      "run",
      "Run a real-time SCHEDULER against a Batsim simulation under the virtual clock: starts the\n"
      "embedded simulator (or --batsim), the broker, and SCHEDULER under the shim. '{endpoint}' in\n"
      "the scheduler's arguments (and VTIME_SCHED_ENDPOINT in its environment) is the ZeroMQ\n"
      "endpoint it must bind (REP). Exit status: 0 done; 2 usage; 3 the scheduler sent an invalid\n"
      "reply; 4 it exited or crashed before the end; 5 it stayed busy past --crash-timeout; 6 it is\n"
      "blocked forever without replying; 7 the simulator failed; 8 past --max-sim-time; 125 internal error; 128+N\n"
      "interrupted by signal N (outputs are written). See docs/cli.md.");
  add_run_options(*app, *o);
  app->add_option("scheduler", o->command, "The scheduler command and its arguments (after --)")->required();
  app->positionals_at_end(true);
  return {app, [o] { return run_action(*o); }};
}

}  // namespace vtime::cli
