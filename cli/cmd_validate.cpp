// `vtime validate`: the user's scheduler configuration and workload run in real time by an
// independent harness (no vtime, no bridge: `sbatch --wrap "sleep D"`, Slurm's own records) and
// in virtual time, job by job (docs/slurm.md "Validation against an independent reference").
//
// Everything that can be checked is checked before anything starts: the scheduler, the workload
// (what the real harness can run: delay jobs that fit the cluster), the slurm.conf lines (what
// vtime-slurm accepts), root and Slurm's programs. The real runs are the harness's
// (bench/slurm_reference.py, installed as share/vtime/validate/), a Python program: it drives
// real daemons for minutes and prints where it is as it goes.
#include "command.h"
#include "companions.h"

#include "slurm_conf.h"

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
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
  int runs = 3;
  std::string prefix = "validate";
  int hosts = 0;
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

int validate_action(const ValidateOptions& o) {
  auto fail = [](const std::string& why) {
    fprintf(stderr, "vtime validate: %s\n", why.c_str());
    return kExitUsage;
  };
  if (o.scheduler == "k8s") {
    return fail("k8s: the independent real-time Kubernetes harness is not there yet (docs/k8s.md); only slurm "
                "can be validated");
  }
  WorkloadShape shape;
  if (std::string why = check_workload(o.workload, shape); !why.empty()) return fail(why);
  int hosts = o.hosts ? o.hosts : shape.nb_res;
  if (hosts < 1) return fail(o.workload + " has no nb_res: give --hosts N");
  if (shape.widest > hosts) {
    return fail(o.workload + ": job " + shape.widest_id + " asks for " + std::to_string(shape.widest) +
                " nodes, the cluster has " + std::to_string(hosts));
  }
  if (!o.slurm_conf.empty()) {
    std::ifstream in(o.slurm_conf);
    if (!in) return fail("cannot read --slurm-conf " + o.slurm_conf);
    std::stringstream ss;
    ss << in.rdbuf();
    auto e = slurm::parse_extra(ss.str(), o.slurm_conf);
    if (!e) return fail(e.error());
  }
  if (geteuid() != 0) return fail("the real-time cluster needs root (slurmd runs jobs as their users)");
  for (const char* p : {"slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "python3"}) {
    if (!on_path(p)) return fail(std::string(p) + " is not installed (see docs/install.md)");
  }
  std::string why;
  std::string harness = find_validate_harness(why);
  if (harness.empty()) return fail(why);
  std::error_code ec;
  std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return fail("cannot find the vtime executable: " + ec.message());

  std::vector<std::string> argv = {"python3", "-u", harness, "-w", fs::absolute(o.workload).string(),
                                   "--runs", std::to_string(o.runs), "--vtime", self,
                                   "--out", o.prefix + "_validation.json", "--csv", o.prefix + "_validation.csv",
                                   "--plot", o.prefix + "_validation.png", "--nodes", std::to_string(hosts)};
  if (!o.slurm_conf.empty()) {
    argv.push_back("--slurm-conf");
    argv.push_back(fs::absolute(o.slurm_conf).string());
  }
  fprintf(stderr, "vtime validate: %zu jobs on %d nodes, %d real-time runs then 2 in virtual time; the real runs "
                  "take about as long as the workload each\n", shape.jobs, hosts, o.runs);
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
      "(slurm: `sbatch --wrap \"sleep D\"` at each submission second, starts from Slurm's own records),\n"
      "then twice in virtual time (`vtime slurm`), and prints each job's start against the real runs'\n"
      "median: a job is off when it is further than max(1 s, the real runs' spread). Writes\n"
      "PREFIX_validation.csv (per job), .json (every run) and .png (start-time scatter, deviation\n"
      "histogram). Needs root and Slurm's daemons. Exit status: 0 every job within; 1 some job off;\n"
      "2 bad input (nothing started); 3 a run failed. See docs/slurm.md.");
  app->add_option("scheduler", o->scheduler, "slurm (k8s: not yet)")
      ->required()
      ->check(CLI::IsMember({"slurm", "k8s"}));
  app->add_option("-w,--workload", o->workload, "Batsim JSON workload (delay profiles)")->required();
  app->add_option("--slurm-conf", o->slurm_conf, "slurm.conf lines over the generated ones, as for `vtime slurm`")
      ->option_text("EXTRA");
  app->add_option("--runs", o->runs, "Real-time runs (reality's own spread)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  app->add_option("--hosts", o->hosts, "Nodes of the cluster (default: the workload's nb_res)")
      ->check(CLI::PositiveNumber);
  app->add_option("-e,--export", o->prefix, "Output prefix")->capture_default_str();
  return {app, [o] { return validate_action(*o); }};
}

}  // namespace vtime::cli
