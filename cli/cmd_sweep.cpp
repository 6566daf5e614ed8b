// `vtime sweep`: a grid of `vtime run`s (sync-policy knobs, any run option, {placeholders} in the
// scheduler's arguments) x workloads x repetitions, against the exact reference; runs.csv,
// summary.csv and figures (docs/sweep.md).
#include "command.h"
#include "run_action.h"
#include "sweep_params.h"

#include <vtime/sim/peer.h>
#include <vtime/sim/platform.h>
#include <vtime/sim/workload.h>
#include <vtime/sweep/plan.h>
#include <vtime/sweep/plots.h>
#include <vtime/sweep/process_pool.h>
#include <vtime/sweep/report.h>
#include <vtime/sweep/slurm_executor.h>
#include <vtime/sweep/task_file.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

namespace vtime::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kExitSomeReferenceFailed = 1;
// --executor slurm: the cluster cannot take the sweep (no Slurm tools, slurmctld does not answer,
// sbatch refuses the options); nothing was submitted.
constexpr int kExitCluster = 3;
// --executor slurm: every run ended, but some of their tasks were ended from outside (scancel, a
// time limit, a lost node): recorded with that status; --resume runs them again.
constexpr int kExitTasksEnded = 4;

struct SweepOptions {
  RunOptions run;  // the fixed run options (and the scheduler command)
  std::vector<std::string> workloads;
  std::string dir;
  std::vector<std::string> params;
  int repeat = 3;
  int jobs = 0;
  bool resume = false;
  double run_timeout = 0;
  double sim_limit = 10;  // --sim-limit F: timeout-policy runs end past F x the reference's makespan
  bool no_plots = false;
  std::string gnuplot = "gnuplot";
  bool quiet = false;
  std::string executor = "local";
  sweep::SlurmOptions slurm;
  // Filled after parsing: the run options given on the command line, as arguments.
  std::vector<std::pair<std::string, std::vector<std::string>>> given;
};

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

// FNV-1a of a file: a resumed sweep must run on the very inputs it started with.
std::string digest_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t h = 1469598103934665603ull;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  char out[20];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string human_duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  return buf;
}

class Sweep {
 public:
  explicit Sweep(SweepOptions& o) : o_(o) {}

  int run() {
    int code = prepare();
    if (code) return code;
    return execute();
  }

 private:
  int usage(const std::string& msg) {
    fprintf(stderr, "vtime sweep: %s\n", msg.c_str());
    return kExitUsage;
  }

  // Everything is checked before anything starts: a bad parameter, input or DIR is one line
  // and exit 2, with nothing run and nothing written.
  int prepare() {
    exe_ = self_exe();
    if (exe_.empty()) {
      fprintf(stderr, "vtime sweep: cannot find this program's path (/proc/self/exe)\n");
      return kExitInternal;
    }
    if (o_.workloads.empty()) return usage("give at least one workload (-w FILE)");
    if (o_.repeat < 1) return usage("--repeat must be at least 1");
    const std::set<std::string> holes = placeholders_in(o_.run.command);
    std::vector<sweep::Param> params;
    std::set<std::string> names;
    for (const auto& text : o_.params) {
      auto eq = text.find('=');
      if (eq == std::string::npos || eq == 0) return usage("--param '" + text + "': write NAME=VALUES");
      sweep::Param p;
      p.name = text.substr(0, eq);
      p.spec = text.substr(eq + 1);
      if (!names.insert(p.name).second) return usage("--param " + p.name + " is given twice");
      if (auto why = unsweepable_reason(p.name); !why.empty()) return usage("cannot sweep '" + p.name + "': " + why);
      const SweepableOption* opt = find_sweepable(p.name);
      const bool hole = holes.count(p.name) > 0;
      if (!opt && !hole)
        return usage("unknown parameter '" + p.name + "': not a vtime run option, and the scheduler's arguments have no {" +
                     p.name + "}");
      if (opt && given(p.name)) return usage("'" + p.name + "' is both swept (--param) and fixed (--" + p.name + ")");
      p.kind = opt ? opt->kind : sweep::ParamKind{sweep::ParamKind::kPlaceholder, 1};
      // A value the scheduler sees changes what the reference does too.
      p.sync_only = opt && opt->sync_only && !hole;
      auto values = sweep::parse_values(p.spec, p.kind);
      if (!values) return usage("--param " + p.name + ": " + values.error());
      p.values = std::move(*values);
      params.push_back(std::move(p));
    }
    for (const auto& h : holes)
      if (!names.count(h)) return usage("the scheduler's arguments use {" + h + "} but no --param " + h + "=VALUES is given");
    if (!given("platform") && !given("hosts") && !names.count("platform") && !names.count("hosts"))
      return usage("give a platform (-p FILE) or a host count (--hosts N)");
    if (o_.executor != "slurm") {
      const sweep::SlurmOptions defaults;
      if (!o_.slurm.partition.empty() || !o_.slurm.time_limit.empty() || !o_.slurm.sbatch_args.empty() ||
          o_.slurm.throttle != defaults.throttle || o_.slurm.runs_per_task != defaults.runs_per_task ||
          o_.slurm.poll_s != defaults.poll_s)
        return usage("--partition, --time-limit, --sbatch-arg, --array-throttle, --runs-per-task and --slurm-poll "
                     "need --executor slurm");
    } else {
      if (auto bad = sweep::check_slurm_options(o_.slurm); !bad.empty()) return usage(bad);
      if (o_.slurm.throttle == 0 && o_.jobs > 0) o_.slurm.throttle = o_.jobs;  // -j J: J tasks at a time
    }

    // Inputs: every workload and platform loads, or nothing starts.
    for (auto& w : o_.workloads) {
      auto wl = sim::open_workload(w, "w0");
      if (!wl) return usage(wl.error());
      w = fs::absolute(w).string();
    }
    if (given("platform")) {
      auto p = sim::load_platform_xml(o_.run.platform, "master_host");
      if (!p) return usage(p.error());
    }
    // Which sync a combination runs in: the swept value, else --sync, else the timeout policy
    // (the exact reference is run anyway).
    sync_swept_ = -1;
    std::vector<std::string> sync_texts;
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].name == "sync") {
        sync_swept_ = static_cast<int>(i);
        for (const auto& v : params[i].values.values) sync_texts.push_back(v.text);
      }
    const std::string fixed_sync = given("sync") ? o_.run.broker.sync : "timeout";
    auto is_exact = [&](const sweep::Values& v) {
      return (sync_swept_ >= 0 ? sync_texts[static_cast<size_t>(v[static_cast<size_t>(sync_swept_)])] : fixed_sync) == "exact";
    };
    plan_ = sweep::make_plan(std::move(params), sweep::name_workloads(o_.workloads), o_.repeat, is_exact);
    // Every run's command line parses as `vtime run`'s would: a bad value is caught here.
    for (const auto& r : plan_.runs) {
      auto argv = run_argv(r);
      std::string err = check_run_argv(argv);
      if (!err.empty()) return usage("the run " + r.id + " would fail: " + err);
    }
    if (o_.executor == "slurm") {
      o_.slurm.vtime = exe_;
      o_.slurm.work_dir = fs::absolute(o_.dir).string() + "/slurm";
      if (auto down = sweep::check_cluster(o_.slurm); !down.empty()) {
        fprintf(stderr, "vtime sweep: --executor slurm: %s; nothing was submitted\n", down.c_str());
        return kExitCluster;
      }
    }
    if (int code = check_dir()) return code;
    return lock_dir();
  }

  // One sweep at a time in a DIR: an exclusive lock on DIR/sweep.lock for the sweep's life (a
  // second sweep, or a --resume while the first still runs, is refused).
  int lock_dir() {
    const std::string path = o_.dir + "/sweep.lock";
    lock_fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) return usage("cannot open " + path + ": " + strerror(errno));
    if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {0};
      ssize_t n = pread(lock_fd_, pid, sizeof pid - 1, 0);
      std::string who = n > 0 ? " (pid " + std::string(pid, static_cast<size_t>(n)) + ")" : "";
      return usage("another vtime sweep" + who + " is running in " + o_.dir + "; wait for it or give another DIR");
    }
    // The pid is only a courtesy to the next sweep's message.
    const std::string me = std::to_string(getpid());
    if (ftruncate(lock_fd_, 0) == 0) {
      ssize_t w = pwrite(lock_fd_, me.data(), me.size(), 0);
      (void)w;
    }
    // Tasks of an earlier, interrupted sweep in this DIR may still be on the cluster.
    if (std::string list = sweep::still_queued(o_.dir + "/slurm"); !list.empty())
      return usage("Slurm still has tasks of this sweep (squeue -j " + list + "): wait for them or scancel them");
    return 0;
  }

  bool given(const std::string& name) const {
    return std::any_of(o_.given.begin(), o_.given.end(), [&](const auto& g) { return g.first == name; });
  }

  // `limit`: the --max-sim-time to give (seconds), 0 for none.
  std::vector<std::string> run_argv(const sweep::PlannedRun& r, double limit = 0) const {
    std::vector<std::string> a = {exe_, "run", "-q", "-e", sweep::run_prefix(o_.dir, r), "-w",
                                  plan_.workloads[r.workload].path};
    if (limit > 0) {
      char buf[64];
      snprintf(buf, sizeof buf, "--max-sim-time=%.6f", limit);
      a.push_back(buf);
    }
    for (const auto& [name, values] : o_.given) {
      if (r.reference && is_sync_only(name)) continue;
      for (const auto& v : values) a.push_back(v.empty() ? "--" + name : "--" + name + "=" + v);
    }
    for (size_t i = 0; i < plan_.params.size(); ++i) {
      const auto& p = plan_.params[i];
      if (r.values[i] == sweep::kUnused || !find_sweepable(p.name)) continue;
      a.push_back("--" + p.name + "=" + p.values.values[static_cast<size_t>(r.values[i])].text);
    }
    if (r.reference) a.push_back("--sync=exact");
    else if (sync_swept_ < 0 && !given("sync")) a.push_back("--sync=timeout");
    a.push_back("--");
    auto cmd = substitute(o_.run.command, plan_.params, r.values);
    a.insert(a.end(), cmd.begin(), cmd.end());
    return a;
  }

  // Parses argv[1..] as `vtime run` would and converts the broker options; the error, or empty.
  static std::string check_run_argv(const std::vector<std::string>& argv) {
    CLI::App app;
    RunOptions ro;
    add_run_options(app, ro);
    app.add_option("scheduler", ro.command)->required();
    app.positionals_at_end(true);
    std::vector<std::string> args(argv.rbegin(), argv.rend() - 2);  // CLI11 wants them reversed
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    broker::Options b;
    std::string err;
    if (!to_broker(ro.broker, b, &err)) return err;
    return {};
  }

  nlohmann::ordered_json definition() const {
    nlohmann::ordered_json d;
    d["vtime_sweep"] = 1;
    d["workloads"] = nlohmann::ordered_json::array();
    for (const auto& w : plan_.workloads) d["workloads"].push_back({{"path", w.path}, {"digest", digest_of(w.path)}});
    d["params"] = nlohmann::ordered_json::array();
    for (const auto& p : plan_.params) d["params"].push_back({{"name", p.name}, {"values", p.spec}});
    d["repeat"] = o_.repeat;
    d["sim_limit"] = o_.sim_limit;
    d["run_options"] = nlohmann::ordered_json::array();
    for (const auto& [name, values] : o_.given) d["run_options"].push_back({{"name", name}, {"values", values}});
    if (given("platform")) d["platform_digest"] = digest_of(o_.run.platform);
    d["scheduler"] = o_.run.command;
    return d;
  }

  int check_dir() {
    std::error_code ec;
    const std::string def_path = o_.dir + "/sweep.json";
    auto mine = definition();
    if (fs::exists(def_path, ec)) {
      std::ifstream in(def_path);
      auto theirs = nlohmann::ordered_json::parse(in, nullptr, false);
      if (theirs.is_discarded()) return usage(def_path + " is not a sweep definition (not JSON); use another DIR");
      if (theirs != mine) {
        std::string what;
        for (auto it = mine.begin(); it != mine.end(); ++it)
          if (!theirs.contains(it.key()) || theirs[it.key()] != it.value()) what += (what.empty() ? "" : ", ") + it.key();
        return usage(o_.dir + " holds another sweep (different " + (what.empty() ? std::string("definition") : what) +
                     "); give another DIR");
      }
      if (!o_.resume) return usage(o_.dir + " already holds this sweep: give --resume to finish it, or another DIR");
      resuming_ = true;
      return 0;
    }
    if (fs::exists(o_.dir, ec) && !fs::is_empty(o_.dir, ec))
      return usage(o_.dir + " is not empty and holds no sweep (no sweep.json); give an empty or new DIR");
    fs::create_directories(o_.dir + "/runs", ec);
    if (ec) return usage("cannot create " + o_.dir + ": " + ec.message());
    if (!sweep::write_file_atomic(def_path, mine.dump(2) + "\n")) {
      fprintf(stderr, "vtime sweep: cannot write %s\n", def_path.c_str());
      return kExitInternal;
    }
    return 0;
  }

  int execute() {
    std::error_code ec;
    fs::create_directories(o_.dir + "/runs", ec);
    std::vector<size_t> todo;
    size_t already = 0;
    for (size_t i = 0; i < plan_.runs.size(); ++i) {
      const std::string d = o_.dir + "/runs/" + plan_.runs[i].id;
      // A run whose task was ended from outside (cancelled, its node lost) runs again.
      if (auto res = sweep::read_result(d); res && !sweep::executor_fault(res->status)) {
        ++already;
        continue;
      }
      fs::remove_all(d, ec);  // cut short last time: run again from scratch
      todo.push_back(i);
    }
    // References first: the other runs' simulated-time limit comes from their makespans.
    std::stable_partition(todo.begin(), todo.end(), [&](size_t i) { return plan_.runs[i].reference; });
    std::vector<size_t> reference_of(plan_.runs.size());
    for (const auto& c : plan_.configurations)
      for (size_t i : c.runs) reference_of[i] = c.reference_run;
    const size_t jobs = o_.jobs > 0 ? static_cast<size_t>(o_.jobs) : std::max(1u, std::thread::hardware_concurrency());
    const bool slurm = o_.executor == "slurm";
    std::string at_a_time = std::to_string(jobs) + " at a time";
    if (slurm) {
      at_a_time = "as Slurm job arrays, " + std::to_string(o_.slurm.runs_per_task) + " run" +
                  (o_.slurm.runs_per_task == 1 ? "" : "s") + " per task" +
                  (o_.slurm.throttle > 0 ? ", " + std::to_string(o_.slurm.throttle) + " tasks at a time" : std::string());
    }
    if (!o_.quiet)
      fprintf(stderr, "vtime sweep: %zu runs (%zu configurations x %zu workload%s, %d repetition%s, exact references)%s, "
              "%s\n",
              plan_.runs.size(), plan_.configurations.size() / std::max<size_t>(1, plan_.workloads.size()),
              plan_.workloads.size(), plan_.workloads.size() == 1 ? "" : "s", o_.repeat, o_.repeat == 1 ? "" : "s",
              resuming_ ? (", " + std::to_string(already) + " already done").c_str() : "", at_a_time.c_str());

    sim::install_stop_signals();
    const bool tty = isatty(2) && !o_.quiet;
    const auto start = std::chrono::steady_clock::now();
    size_t done = 0, failed = 0, running = 0, queued = 0;
    auto progress = [&] {
      if (!tty) return;
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::string eta = done ? human_duration(elapsed / static_cast<double>(done) * static_cast<double>(todo.size() - done))
                             : std::string("?");
      std::string waiting = slurm ? ", " + std::to_string(queued) + " queued" : std::string();
      fprintf(stderr, "\r\033[Kvtime sweep: %zu/%zu runs done, %zu running%s, %zu failed, ETA %s", already + done,
              plan_.runs.size(), running, waiting.c_str(), failed, eta.c_str());
    };
    bool write_failed = false;
    sweep::PoolOptions po;
    po.parallel = jobs;
    po.run_timeout_s = o_.run_timeout;
    po.stop_requested = [] { return sim::stop_signal(); };
    po.on_start = [&](size_t) {
      ++running;
      progress();
    };
    std::vector<size_t> stage;  // the runs of the stage running, by command index
    po.on_done = [&](size_t k, const sweep::Outcome& out) {
      --running;
      const sweep::PlannedRun& r = plan_.runs[stage[k]];
      if (out.interrupted) return;  // no result.json: --resume runs it again
      std::string err;
      if (!sweep::write_result(o_.dir + "/runs/" + r.id, out, &err)) {
        fprintf(stderr, "\nvtime sweep: %s\n", err.c_str());
        write_failed = true;
      }
      ++done;
      const std::string status = sweep::status_of(out);
      if (status != "ok") ++failed;
      if (!tty && !o_.quiet)
        fprintf(stderr, "vtime sweep: [%zu/%zu] %s: %s (%.2f s)\n", already + done, plan_.runs.size(), r.id.c_str(),
                status.c_str(), out.wall_s);
      if (!out.reason.empty() && !o_.quiet)
        fprintf(stderr, "%svtime sweep: %s: %s (%s)\n", tty ? "\r\033[K" : "", r.id.c_str(), status.c_str(), out.reason.c_str());
      progress();
    };
    po.on_queued = [&](size_t n) {
      queued = n;
      progress();
    };
    std::string executor_error;
    // A timeout-policy scheduler that lost an event may ask for wake-ups forever: the other runs
    // end past --sim-limit times their reference's makespan (read once per reference).
    std::map<size_t, double> limit_of;
    auto limit_for = [&](size_t i) {
      if (o_.sim_limit <= 0 || given("max-sim-time")) return 0.0;
      auto [it, fresh] = limit_of.emplace(reference_of[i], 0.0);
      if (fresh) {
        auto out = sweep::read_outputs(sweep::run_prefix(o_.dir, plan_.runs[reference_of[i]]));
        if (out && out->schedule.count("makespan"))
          it->second = o_.sim_limit * std::max(1.0, std::strtod(out->schedule.at("makespan").c_str(), nullptr));
      }
      return it->second;
    };
    auto run_stage = [&](bool references) {
      stage.clear();
      std::vector<sweep::Command> commands;
      for (size_t i : todo) {
        const sweep::PlannedRun& r = plan_.runs[i];
        if (r.reference != references) continue;
        const double limit = references ? 0.0 : limit_for(i);
        const std::string d = o_.dir + "/runs/" + r.id;
        fs::create_directories(d, ec);
        commands.push_back({run_argv(r, limit), d + "/run.log"});
        stage.push_back(i);
      }
      if (slurm) return sweep::run_on_slurm(commands, po, o_.slurm, references ? "references" : "runs", &executor_error);
      return sweep::run_all(commands, po);
    };
    bool complete = run_stage(true) && run_stage(false);
    if (tty) fprintf(stderr, "\r\033[K");
    if (!executor_error.empty()) {
      fprintf(stderr, "vtime sweep: --executor slurm: %s\n", executor_error.c_str());
      return kExitCluster;
    }

    // The tables and figures from whatever is finished, also after an interruption.
    sweep::Report rep = sweep::build_report(plan_, o_.dir);
    if (!sweep::write_runs_csv(plan_, rep, o_.dir + "/runs.csv") ||
        !sweep::write_summary_csv(plan_, rep, o_.dir + "/summary.csv")) {
      fprintf(stderr, "vtime sweep: cannot write %s/runs.csv or summary.csv\n", o_.dir.c_str());
      return kExitInternal;
    }
    size_t figures = 0;
    if (!o_.no_plots) {
      auto plots = sweep::write_plots(plan_, rep, o_.dir + "/plots", o_.gnuplot);
      figures = plots.figures.size();
      if (!plots.error.empty()) fprintf(stderr, "vtime sweep: %s\n", plots.error.c_str());
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    size_t finished = 0, not_ok = 0;
    for (const auto& m : rep.runs) {
      if (!m.result) continue;
      ++finished;
      if (m.result->status != "ok") ++not_ok;
    }
    if (!complete) {
      fprintf(stderr, "vtime sweep: interrupted: %zu of %zu runs finished (kept in %s); finish with --resume\n", finished,
              plan_.runs.size(), o_.dir.c_str());
      return 128 + (sim::stop_signal() ? sim::stop_signal() : SIGINT);
    }
    if (!o_.quiet)
      fprintf(stderr, "vtime sweep: %zu runs (%zu failed) in %s; %s/runs.csv, %s/summary.csv, %zu figures in %s/plots\n",
              finished, not_ok, human_duration(elapsed).c_str(), o_.dir.c_str(), o_.dir.c_str(), figures, o_.dir.c_str());
    if (write_failed) return kExitInternal;
    int code = 0;
    size_t ended = 0;
    for (const auto& m : rep.runs) ended += m.result && sweep::executor_fault(m.result->status) ? 1 : 0;
    if (ended > 0) {
      fprintf(stderr, "vtime sweep: %zu run%s did not finish: %s task%s ended from outside (the reasons above and in "
              "their result.json); --resume runs them again\n", ended, ended == 1 ? "" : "s", ended == 1 ? "its" : "their",
              ended == 1 ? " was" : "s were");
      return kExitTasksEnded;
    }
    for (size_t i = 0; i < plan_.runs.size(); ++i) {
      const auto& m = rep.runs[i];
      if (plan_.runs[i].reference && m.result && m.result->status != "ok") {
        fprintf(stderr, "vtime sweep: the exact reference %s failed (%s, see its run.log): its configurations have no "
                "deviation figures\n", plan_.runs[i].id.c_str(), m.result->status.c_str());
        code = kExitSomeReferenceFailed;
      }
    }
    return code;
  }

  SweepOptions& o_;
  std::string exe_;
  sweep::Plan plan_;
  int sync_swept_ = -1;
  bool resuming_ = false;
  int lock_fd_ = -1;  // DIR/sweep.lock, held (flock) until the process ends
};

}  // namespace

Subcommand register_sweep(CLI::App& root) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* app = root.add_subcommand(
      "sweep",
      "Run a grid of `vtime run`s: each --param NAME=VALUES (a vtime run option such as timeout,\n"
      "min-delay, max-timestep, or a {NAME} in the scheduler's arguments) x each workload x --repeat,\n"
      "plus the exact reference of each; writes DIR/runs.csv, DIR/summary.csv and figures in\n"
      "DIR/plots (docs/sweep.md). VALUES: 1,2,5 or FIRST:LAST:STEP (0ms:100ms:1ms) or\n"
      "log:FIRST:LAST:COUNT. Runs use --sync timeout unless told otherwise. --executor slurm runs\n"
      "them as tasks of Slurm job arrays on a shared DIR (docs/sweep.md \"On a Slurm cluster\").\n"
      "Exit status: 0 done; 1 an exact reference failed; 2 usage (nothing run); 3 the Slurm cluster\n"
      "cannot take the sweep (nothing submitted); 4 Slurm ended some runs' tasks (scancel, time\n"
      "limit, node lost: --resume runs them again); 125 internal; 128+N interrupted by signal N\n"
      "(finished runs kept: --resume).");
  const size_t before = app->get_options().size();
  add_run_options(*app, o->run);
  // The sweep sets these per run itself.
  for (const char* name : {"--workload", "--export", "--record", "--compress", "--clock-ignore", "--quiet", "--batsim"})
    app->remove_option(app->get_option(name));
  std::vector<CLI::Option*> run_opts;
  for (size_t i = before; i < app->get_options().size(); ++i) run_opts.push_back(app->get_options()[i]);
  app->add_option("-w,--workload", o->workloads, "Batsim JSON workload (repeat -w for several)")->required();
  app->add_option("-o,--output", o->dir, "DIR for the results (new or empty; or this sweep's, with --resume)")
      ->required()
      ->option_text("DIR");
  app->add_option("--param", o->params, "NAME=VALUES: a parameter to sweep (several: the cross product)")
      ->option_text("NAME=VALUES");
  app->add_option("--repeat", o->repeat, "runs of each timeout-policy configuration (exact ones run once)")
      ->capture_default_str();
  app->add_option("-j,--jobs", o->jobs, "runs at a time (default: the number of CPUs; parallel runs share the CPU, "
                                        "which changes timeout-policy results)");
  app->add_flag("--resume", o->resume, "finish the sweep in DIR: run only what is not finished");
  app->add_option("--sim-limit", o->sim_limit,
                 "a non-exact run ends (status sim_time_limit, a hang) once its simulation passes F times its "
                 "exact reference's makespan; 0: no limit (default 10)")
      ->option_text("F")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--run-timeout", o->run_timeout, "real seconds a run may take before it is ended (status timeout); 0 none")
      ->capture_default_str();
  app->add_flag("--no-plots", o->no_plots, "write the tables only");
  app->add_option("--gnuplot", o->gnuplot, "the gnuplot program that renders the figures")->capture_default_str();
  app->add_flag("-q,--quiet", o->quiet, "no progress and no summary");
  // Where the runs run (docs/sweep.md "On a Slurm cluster").
  app->add_option("--executor", o->executor, "local (child processes, -j at a time) or slurm (Slurm job arrays)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  app->add_option("--partition", o->slurm.partition, "slurm: the partition of the tasks (sbatch --partition)");
  app->add_option("--time-limit", o->slurm.time_limit, "slurm: each task's time limit (sbatch --time: MINUTES, HH:MM:SS, D-HH:MM...)")
      ->option_text("TIME");
  app->add_option("--sbatch-arg", o->slurm.sbatch_args,
                  "slurm: one more sbatch argument for every task, written --sbatch-arg=--mem=2G (repeatable)")
      ->option_text("ARG")
      ->allow_extra_args(false);
  app->add_option("--array-throttle", o->slurm.throttle, "slurm: tasks of an array running at once (sbatch --array=...%N; default -j if given, else no limit)")
      ->option_text("N");
  app->add_option("--runs-per-task", o->slurm.runs_per_task, "slurm: runs each task runs one after another (for short runs)")
      ->capture_default_str();
  app->add_option("--slurm-poll", o->slurm.poll_s, "slurm: seconds between looks at the queue and the finished runs")
      ->capture_default_str();
  app->add_option("scheduler", o->run.command, "The scheduler command and its arguments (after --)")->required();
  app->positionals_at_end(true);
  return {app, [o, run_opts] {
            for (CLI::Option* opt : run_opts) {
              if (opt->count() == 0) continue;
              std::vector<std::string> values;
              if (opt->get_type_size() == 0) {
                for (size_t k = 0; k < opt->count(); ++k) values.emplace_back();  // a flag
              } else {
                values = opt->results();
              }
              o->given.emplace_back(opt->get_lnames().front(), values);
            }
            Sweep s(*o);
            return s.run();
          }};
}

Subcommand register_sweep_task(CLI::App& root) {
  auto file = std::make_shared<std::string>();
  auto index = std::make_shared<size_t>(0);
  CLI::App* app = root.add_subcommand(
      "sweep-task",
      "One task of `vtime sweep --executor slurm` (run by Slurm, not by hand): runs the runs of\n"
      "task INDEX of FILE one after another and writes each one's outcome.json. Exit status: 0\n"
      "every run ended; 1 an outcome could not be written; 2 bad FILE or INDEX; 128+N stopped by\n"
      "signal N (scancel, a time limit).");
  app->group("");  // not listed in `vtime --help`: the sweep's own
  app->add_option("file", *file, "The stage's task file (DIR/slurm/STAGE.json)")->required();
  app->add_option("index", *index, "The array index ($SLURM_ARRAY_TASK_ID)")->required();
  return {app, [file, index] {
            auto tf = sweep::read_task_file(*file);
            if (!tf) {
              fprintf(stderr, "vtime sweep-task: %s\n", tf.error().c_str());
              return kExitUsage;
            }
            if (*index >= tf->tasks.size()) {
              fprintf(stderr, "vtime sweep-task: %s has %zu tasks, no index %zu\n", file->c_str(), tf->tasks.size(), *index);
              return kExitUsage;
            }
            sim::install_stop_signals();
            return sweep::run_task(*tf, *index, [] { return sim::stop_signal(); });
          }};
}

}  // namespace vtime::cli
