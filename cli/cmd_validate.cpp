// `vtime validate`: the user's scheduler configuration and workload run in real time by an
// independent harness (no vtime, no bridge: `sbatch --wrap "sleep D"` and Slurm's own records;
// plain Pods of an API client of its own for Kubernetes) and in virtual time, job by job
// (docs/slurm.md and docs/k8s.md, "Validation against an independent reference").
//
// Everything that can be checked is checked before anything starts: the scheduler, the workload
// (what the real harness can run: delay jobs that fit the cluster, one host each for Pods), the
// slurm.conf lines (what vtime-slurm accepts) or the scheduler configuration (what vtime-k8s
// accepts), root and Slurm's programs, etcd and the Kubernetes binaries. The real runs are the
// harness's (bench/slurm_reference.py or bench/k8s_reference.py, installed in
// share/vtime/validate/), a Python program: it drives real daemons for minutes and prints where
// it is as it goes.
#include "child_output.h"
#include "command.h"
#include "companions.h"

#include "slurm_conf.h"
#ifdef VTIME_WITH_K8S
#include "cluster.h"
#endif

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace vtime::cli {
namespace {

namespace fs = std::filesystem;

inline constexpr int kExitOff = 1;         // some job is off (beyond the real runs' range)
inline constexpr int kExitSetupFailed = 3;  // a real run or the vtime run could not be made

struct ValidateOptions {
  std::string scheduler;
  std::string workload;
  std::string slurm_conf;
  std::string scheduler_config;  // k8s
  int runs = 3;
  std::string prefix = "validate";
  int hosts = 0;
  std::vector<std::string> vtime_args;   // options of `vtime slurm` / `vtime k8s` for the virtual runs
  std::vector<std::string> bridge_args;  // options of vtime-slurm / vtime-k8s for them
};

// What check_workload learns of a workload the real harness can run.
struct WorkloadShape {
  int nb_res = 0;
  size_t jobs = 0;
  int widest = 0;          // the most nodes a job asks for
  std::string widest_id;   // that job
};

// The workload's jobs as the real harness will run them; an empty string when it can, else why not.
std::string check_workload(const std::string& path, WorkloadShape& shape) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path;
  nlohmann::json w;
  try {
    w = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return path + " is not JSON: " + e.what();
  }
  if (!w.is_object() || !w.contains("jobs") || !w["jobs"].is_array() || w["jobs"].empty()) {
    return path + ": no \"jobs\" array (a Batsim workload)";
  }
  const nlohmann::json profiles = w.value("profiles", nlohmann::json::object());
  shape.nb_res = w.value("nb_res", 0);
  std::set<std::string> ids;
  for (const auto& j : w["jobs"]) {
    if (!j.is_object() || !j.contains("id") || !j.contains("subtime") || !j.contains("res") ||
        !j.contains("profile") || !j["subtime"].is_number() || !j["res"].is_number_integer() ||
        !j["profile"].is_string()) {
      return path + ": a job without id, numeric subtime, integer res and profile: " + j.dump();
    }
    std::string id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
    if (!ids.insert(id).second) return path + ": job id " + id + " appears twice";
    if (j["subtime"].get<double>() < 0) return path + ": job " + id + " is submitted before time 0";
    if (j["res"].get<int>() < 1) return path + ": job " + id + " asks for no resource";
    if (j["res"].get<int>() > shape.widest) {
      shape.widest = j["res"].get<int>();
      shape.widest_id = id;
    }
    auto p = profiles.find(j["profile"].get<std::string>());
    if (p == profiles.end()) return path + ": job " + id + ": no profile '" + j["profile"].get<std::string>() + "'";
    if (!p->is_object() || p->value("type", "") != "delay" || !p->contains("delay") || !(*p)["delay"].is_number()) {
      return path + ": job " + id + ": profile '" + j["profile"].get<std::string>() +
             "' is not a delay profile; the real-time harness runs each job as `sleep DELAY`";
    }
  }
  shape.jobs = ids.size();
  return {};
}

bool on_path(const std::string& prog) {
  const char* path = getenv("PATH");
  std::string dirs = std::string(path ? path : "") + ":/usr/sbin:/sbin";
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');) {
    if (!d.empty() && access((fs::path(d) / prog).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// What the Slurm harness needs: an empty string when all is there, else why not.
std::string check_slurm(const ValidateOptions& o) {
  if (!o.scheduler_config.empty()) return "--scheduler-config is for k8s; give slurm.conf lines with --slurm-conf";
  if (!o.slurm_conf.empty()) {
    std::ifstream in(o.slurm_conf);
    if (!in) return "cannot read --slurm-conf " + o.slurm_conf;
    std::stringstream ss;
    ss << in.rdbuf();
    auto e = slurm::parse_extra(ss.str(), o.slurm_conf);
    if (!e) return e.error();
  }
  if (geteuid() != 0) return "the real-time cluster needs root (slurmd runs jobs as their users)";
  for (const char* p : {"slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "python3"}) {
    if (!on_path(p)) return std::string(p) + " is not installed (see docs/install.md)";
  }
  return {};
}

// What the Kubernetes harness needs (one-host jobs: a Pod runs on one Node).
std::string check_k8s(const ValidateOptions& o, const WorkloadShape& shape) {
#ifndef VTIME_WITH_K8S
  (void)o;
  (void)shape;
  return "k8s: this vtime was built without vtime-k8s (see docs/install.md)";
#else
  if (!o.slurm_conf.empty()) return "--slurm-conf is for slurm; give a KubeSchedulerConfiguration with --scheduler-config";
  if (shape.widest > 1) {
    return o.workload + ": job " + shape.widest_id + " asks for " + std::to_string(shape.widest) +
           " hosts; a Pod runs on one Node, so k8s validates one-host jobs only";
  }
  if (!o.scheduler_config.empty()) {
    // The same refusals as vtime-k8s's (k8s/cluster.h): the harness sets the same keys.
    std::ifstream in(o.scheduler_config);
    if (!in) return "cannot read --scheduler-config " + o.scheduler_config;
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      k8s::Cluster::scheduler_config(ss.str(), "kubeconfig", "127.0.0.1:0", o.scheduler_config);
    } catch (const k8s::ClusterError& e) {
      return e.what();
    }
  }
  for (const char* p : {"etcd", "openssl", "python3"}) {
    if (!on_path(p)) return std::string(p) + " is not installed (see docs/install.md)";
  }
  if (k8s::default_bin_dir().empty() && !on_path("kube-scheduler")) {
    return "kube-apiserver and kube-scheduler not found ($VTIME_K8S_BIN, /var/cache/vtime/kubernetes-1.20.2/bin or "
           "PATH): k8s/install-kubernetes builds them (the README's install command runs it)";
  }
  return {};
#endif
}

// The options for the virtual-time runs, checked by `vtime SCHEDULER --check` as the runs would
// take them (vtime's options, then the bridge's own --check): an empty string when accepted,
// else what was wrong.
std::string check_vtime_options(const ValidateOptions& o, const std::string& self, int hosts) {
  if (o.vtime_args.empty() && o.bridge_args.empty()) return {};
  // What the harness gives each vtime run itself.
  static const std::set<std::string> kOwn = {"-w", "--workload", "-e", "--export", "--hosts", "-q", "--quiet",
                                             "--slurm-conf", "--scheduler-config", "--check", "--"};
  for (const std::string& a : o.vtime_args) {
    const std::string name = a.substr(0, a.find('='));
    if (kOwn.count(name)) {
      return "--vtime-arg " + a + ": validate sets " + name + " itself" +
             (name == "--" ? " (give the bridge's options with --bridge-arg)" : "");
    }
    if (a.empty() || a[0] != '-') {
      return "--vtime-arg " + a + ": not an option of `vtime " + o.scheduler + "` (the bridge's go with --bridge-arg)";
    }
  }
  std::vector<std::string> args = {o.scheduler, "--check", "-w", o.workload, "--hosts", std::to_string(hosts)};
  args.insert(args.end(), o.vtime_args.begin(), o.vtime_args.end());
  args.push_back("--");
  args.insert(args.end(), o.bridge_args.begin(), o.bridge_args.end());
  const ChildOutput r = run_capturing(self, args, true);
  if (!r.ran) return std::string("cannot run `vtime ") + o.scheduler + " --check`: " + strerror(errno);
  if (r.ok()) return {};
  // One line: what was wrong, not CLI11's pointer to a --help of another command.
  std::string first;
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty() && line.find("Run with --help") == std::string::npos) {
      first = line;
      break;
    }
  }
  return "the options for the virtual-time runs (--vtime-arg, --bridge-arg) are refused: " +
         (first.empty() ? "`vtime " + o.scheduler + " --check` failed" : first);
}

int validate_action(const ValidateOptions& o) {
  auto fail = [](const std::string& why) {
    fprintf(stderr, "vtime validate: %s\n", why.c_str());
    return kExitUsage;
  };
  const bool k8s = o.scheduler == "k8s";
  WorkloadShape shape;
  if (std::string why = check_workload(o.workload, shape); !why.empty()) return fail(why);
  int hosts = o.hosts ? o.hosts : shape.nb_res;
  if (hosts < 1) return fail(o.workload + " has no nb_res: give --hosts N");
  if (shape.widest > hosts) {
    return fail(o.workload + ": job " + shape.widest_id + " asks for " + std::to_string(shape.widest) +
                " nodes, the cluster has " + std::to_string(hosts));
  }
  if (std::string why = k8s ? check_k8s(o, shape) : check_slurm(o); !why.empty()) return fail(why);
  std::string why;
  std::string harness = find_validate_harness(o.scheduler, why);
  if (harness.empty()) return fail(why);
  std::error_code ec;
  std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return fail("cannot find the vtime executable: " + ec.message());
  if (std::string bad = check_vtime_options(o, self, hosts); !bad.empty()) return fail(bad);

  std::vector<std::string> argv = {"python3", "-u", harness, "-w", fs::absolute(o.workload).string(),
                                   "--runs", std::to_string(o.runs), "--vtime", self,
                                   "--out", o.prefix + "_validation.json", "--csv", o.prefix + "_validation.csv",
                                   "--plot", o.prefix + "_validation.png", k8s ? "--hosts" : "--nodes",
                                   std::to_string(hosts)};
  if (!o.slurm_conf.empty()) {
    argv.push_back("--slurm-conf");
    argv.push_back(fs::absolute(o.slurm_conf).string());
  }
  if (!o.scheduler_config.empty()) {
    argv.push_back("--scheduler-config");
    argv.push_back(fs::absolute(o.scheduler_config).string());
  }
  for (const std::string& a : o.vtime_args) argv.push_back("--vtime-arg=" + a);
  for (const std::string& a : o.bridge_args) argv.push_back("--bridge-arg=" + a);
  fprintf(stderr, "vtime validate: %zu jobs on %d %s, %d real-time runs then 2 in virtual time; the real runs "
                  "take about as long as the workload each\n", shape.jobs, hosts, k8s ? "Nodes" : "nodes", o.runs);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return fail(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    dup2(STDERR_FILENO, STDOUT_FILENO);  // one stream of progress, as the other subcommands
    execvp("python3", args.data());
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(st)) return kExitSetupFailed;
  switch (WEXITSTATUS(st)) {
    case 0: return 0;
    case 1: return kExitOff;
    default: return kExitSetupFailed;
  }
}

}  // namespace

Subcommand register_validate(CLI::App& root) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* app = root.add_subcommand(
      "validate",
      "Check vtime against real time for your own scheduler configuration and workload.\n"
      "Runs the workload --runs times in real time on a private cluster, with no vtime and no bridge\n"
      "(slurm: `sbatch --wrap \"sleep D\"` at each submission second, starts from Slurm's own records;\n"
      "k8s: plain priority-0 Pods created by an API client of its own at each submission second and\n"
      "deleted `delay` seconds after they are bound), then twice in virtual time (`vtime slurm`,\n"
      "`vtime k8s`), and prints each job's start against the real runs' median: a job is off when it\n"
      "is further than max(1 s, the real runs' spread). Writes PREFIX_validation.csv (per job), .json\n"
      "(every run) and .png (start-time scatter, deviation histogram). slurm needs root and Slurm's\n"
      "daemons; k8s needs etcd and the Kubernetes binaries of the install command. Exit status: 0\n"
      "every job within; 1 some job off; 2 bad input (nothing started); 3 a run failed. See\n"
      "docs/slurm.md and docs/k8s.md.");
  app->add_option("scheduler", o->scheduler, "slurm or k8s")
      ->required()
      ->check(CLI::IsMember({"slurm", "k8s"}));
  app->add_option("-w,--workload", o->workload, "Batsim JSON workload (delay profiles)")->required();
  app->add_option("--slurm-conf", o->slurm_conf, "slurm.conf lines over the generated ones, as for `vtime slurm`")
      ->option_text("EXTRA");
  app->add_option("--scheduler-config", o->scheduler_config,
                  "k8s: a KubeSchedulerConfiguration, as for `vtime k8s` (default: the default profile)")
      ->option_text("FILE");
  app->add_option("--runs", o->runs, "Real-time runs (reality's own spread)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  app->add_option("--hosts", o->hosts, "Nodes of the cluster (default: the workload's nb_res)")
      ->check(CLI::PositiveNumber);
  app->add_option("-e,--export", o->prefix, "Output prefix")->capture_default_str();
  app->add_option("--vtime-arg", o->vtime_args,
                  "An option of `vtime slurm` / `vtime k8s` for the virtual-time runs (repeatable), e.g. "
                  "--vtime-arg=--timer-slack=50us")
      ->option_text("ARG")
      ->allow_extra_args(false);
  app->add_option("--bridge-arg", o->bridge_args,
                  "An option of vtime-slurm / vtime-k8s for the virtual-time runs (repeatable), e.g. "
                  "--bridge-arg=--attempt-cost=500us")
      ->option_text("ARG")
      ->allow_extra_args(false);
  return {app, [o] { return validate_action(*o); }};
}

}  // namespace vtime::cli
