// The control plane of one run (see cluster.h).
#include "cluster.h"

#include "component_env.h"
#include "loopback_ports.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vtime::k8s {
namespace {

namespace fs = std::filesystem;

void write_file(const std::string& path, const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw ClusterError("cannot write " + path);
  std::error_code ec;
  fs::permissions(path, perms, ec);
}

std::string url(int port, bool tls = false) {
  return std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port);
}

const char* kProbePod = "vtime-k8s-probe";

// Runs a short command to its end, its output into `log`. Throws ClusterError when it cannot run
// or fails.
void run_command(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) throw ClusterError("cannot open " + log + ": " + strerror(errno));
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out, 1);
    dup2(out, 2);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw ClusterError("'" + args[0] + " " + args[1] + "' failed" +
                       (WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (is it installed?)" : "") + "; see " + log);
  }
}

}  // namespace

std::string default_bin_dir() {
  if (const char* env = std::getenv("VTIME_K8S_BIN"); env && *env) return env;
  std::string cache = "/var/cache/vtime/kubernetes-1.20.2";
  if (const char* env = std::getenv("VTIME_K8S_CACHE"); env && *env) cache = env;
  std::error_code ec;
  if (fs::exists(cache + "/bin/kube-scheduler", ec)) return cache + "/bin";
  return "";  // PATH
}

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

Cluster::Cluster(ClusterOptions o) : o_(std::move(o)) {}

Cluster::~Cluster() { stop(false); }

std::string Cluster::bin(const std::string& name) const {
  if (o_.bin_dir.empty()) return name;
  return (fs::path(o_.bin_dir) / name).string();
}

void Cluster::write_credentials() {
  // The same token in every run. It travels in every request of the components, and runs with
  // random tokens (even of one length, whose HPACK encodings had one length too) parted after
  // ~690 simulated seconds of the burst workload where runs with one token never did: why is
  // not known (docs/k8s.md "Determinism"). It guards nothing real: the API listens on loopback
  // only, for the run's duration, and its Nodes and Pods are the simulation's.
  token_ = "vtime-k8s-simulation";
  write_file(o_.dir + "/tokens.csv", token_ + ",vtime-k8s,vtime-k8s,system:masters\n");
  kubeconfig_ = o_.dir + "/kubeconfig";
  write_file(kubeconfig_,
             "apiVersion: v1\n"
             "kind: Config\n"
             "clusters:\n"
             "- name: vtime\n"
             "  cluster:\n"
             "    server: " + url(apiserver_port_, true) + "\n"
             "    insecure-skip-tls-verify: true\n"
             "users:\n"
             "- name: vtime\n"
             "  user:\n"
             "    token: " + token_ + "\n"
             "contexts:\n"
             "- name: vtime\n"
             "  context:\n"
             "    cluster: vtime\n"
             "    user: vtime\n"
             "current-context: vtime\n");
}

void Cluster::start_daemon(const std::string& name, std::vector<std::string> argv, std::vector<std::string> extra_env) {
  // Its output and its log are one file, log/NAME.log (Go components log to stderr).
  std::string log = o_.dir + "/log/" + name + ".log";
  std::vector<std::string> env = env_;
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  try {
    daemons_.start({name, std::move(argv), log, log, std::move(env), o_.dir});
  } catch (const bridges::DaemonError& e) {
    throw ClusterError(e.what());
  }
}

template <class F>
void Cluster::wait_for(const std::string& component, const std::string& what, F ready, std::chrono::milliseconds step) {
  try {
    daemons_.wait_until(component + " " + what, o_.start_timeout, "see " + o_.dir + "/log/" + component + ".log", ready,
                        step);
  } catch (const bridges::DaemonError& e) {
    throw ClusterError(e.what());
  }
}

void Cluster::start() {
  std::error_code ec;
  for (const char* sub : {"log", "etcd", "certs"}) fs::create_directories(o_.dir + "/" + sub, ec);
  if (ec) throw ClusterError("cannot create directories in " + o_.dir + ": " + ec.message());
  try {
    env_ = component_environment(environ, o_.component_env);
  } catch (const std::invalid_argument& e) {
    throw ClusterError(std::string("bad component environment: ") + e.what());
  }
  int base = 0;
  try {
    ports_.emplace(5, true);  // Go's listeners reuse addresses
    base = ports_->base();
  } catch (const std::runtime_error& e) {
    throw ClusterError(e.what());
  }
  etcd_port_ = base;
  etcd_peer_port_ = base + 1;
  apiserver_port_ = base + 2;
  scheduler_port_ = base + 3;
  scheduler_insecure_port_ = base + 4;
  write_credentials();
  proxy_socket_ = o_.dir + "/api.sock";
  fs::remove(proxy_socket_, ec);

  // The components run in the run's directory and are given paths relative to it: the length of
  // their arguments and files must not depend on where the run is (component_env.h).
  start_daemon("etcd", {o_.etcd, "--name", "vtime", "--data-dir", "etcd", "--listen-client-urls", url(etcd_port_),
                 "--advertise-client-urls", url(etcd_port_), "--listen-peer-urls", url(etcd_peer_port_),
                 "--initial-advertise-peer-urls", url(etcd_peer_port_), "--initial-cluster",
                 "vtime=" + url(etcd_peer_port_), "--listen-metrics-urls", "", "--log-level", "warn",
                 // One member, no peers to send heartbeats to: raft's tick (the heartbeat interval)
                 // still wakes etcd, ten times a virtual second by default; once a second is
                 // plenty here and saves advances of the clock.
                 "--heartbeat-interval", "1000", "--election-timeout", "5000",
                 // Its storage commits batches every 100 ms, another ten wake-ups a virtual second;
                 // reads see uncommitted writes, so only durability waits longer.
                 "--backend-batch-interval", "1s"},
               // What its disk takes to make each write durable (ClusterOptions::sync_latency_ns).
               o_.sync_latency_ns > 0 ? std::vector<std::string>{"VTIME_SYNC_COST=" + std::to_string(o_.sync_latency_ns)}
                                      : std::vector<std::string>{});
  wait_for("etcd", "to accept connections", [&] { return bridges::loopback_port_answers(etcd_port_); });

  // kube-apiserver 1.20 requires a service-account token issuer and its signing key, although
  // nothing here uses service accounts: a key of this run's own.
  std::string sa_key = "certs/service-account.key";
  run_command({"openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", o_.dir + "/" + sa_key},
              o_.dir + "/log/openssl.log");
  std::vector<std::string> api = {
      bin("kube-apiserver"),
      "--etcd-servers=" + url(etcd_port_),
      "--bind-address=127.0.0.1",
      // Not the address of the host's default route: the run's own network has only a loopback
      // (bridges/private_network.h), and the host's address has no business in the run.
      "--advertise-address=127.0.0.1",
      "--secure-port=" + std::to_string(apiserver_port_),
      "--cert-dir=certs",
      "--token-auth-file=tokens.csv",
      "--authorization-mode=AlwaysAllow",
      // No controller-manager creates service accounts, and no kubelet clears the not-ready
      // taints: the admission plugins that need them are off. Priority is off so that the
      // bridge may give Pods their priority itself (bridge.h, --pod-priority).
      "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority",
      "--endpoint-reconciler-type=none",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--service-account-issuer=https://kubernetes.default.svc",
      "--service-account-signing-key-file=" + sa_key,
      "--service-account-key-file=" + sa_key,
      // Watches served from etcd rather than from the API server's cache: the cache keeps a
      // jittered bookmark timer per resource type, about 40 wake-ups a second of virtual time that
      // change nothing here (each is an advance of the clock). Flags given with --apiserver-flag
      // come later and win.
      "--watch-cache=false",
      // No compaction of etcd's history: the scheduler's informers end their watches after a
      // random 5-10 minutes and resume from the last version they saw; once compacted, that
      // version is gone, the informer lists again, and the relist of Services or Nodes moves
      // every waiting Pod back to the active queue at an instant that depends on Go's random
      // numbers (a schedule that changed from run to run at 766 s on spaced_200).
      "--etcd-compaction-interval=0",
      "--enable-priority-and-fairness=false",
      "--profiling=false",
  };
  for (auto& f : o_.apiserver_flags) api.push_back(f);
  start_daemon("kube-apiserver", std::move(api));
  // The bridge's way into the API: kubectl holds the credentials and speaks TLS.
  start_daemon("kubectl-proxy", {bin("kubectl"), "proxy", "--kubeconfig=kubeconfig", "--unix-socket=api.sock"});
  http_ = std::make_unique<HttpClient>(proxy_socket_, std::chrono::seconds(60));
  api_ = std::make_unique<KubeApi>(*http_);
  wait_for("kube-apiserver", "to be ready", [&] { return fs::exists(proxy_socket_) && api_->ready(); });
  wait_for("kube-apiserver", "to create the default namespace", [&] { return api_->namespace_ready(); });
}

void Cluster::start_scheduler() {
  std::string user;
  if (!o_.scheduler_config.empty()) {
    std::ifstream in(o_.scheduler_config);
    if (!in) throw ClusterError("cannot read the scheduler configuration " + o_.scheduler_config);
    std::stringstream ss;
    ss << in.rdbuf();
    user = ss.str();
  }
  std::string config = o_.dir + "/scheduler-config.yaml";
  write_file(config, scheduler_config(user, "kubeconfig", "127.0.0.1:" + std::to_string(scheduler_insecure_port_),
                                      o_.scheduler_config.empty() ? "(default)" : o_.scheduler_config));
  std::vector<std::string> argv = {bin("kube-scheduler"), "--config=scheduler-config.yaml",
                                   "--secure-port=" + std::to_string(scheduler_port_), "--bind-address=127.0.0.1",
                                   // Each binding in its log ("Successfully bound pod to node"), with
                                   // virtual timestamps: the run's debugging aid.
                                   "--v=2"};
  for (auto& f : o_.scheduler_flags) argv.push_back(f);
  std::vector<std::string> env;
  // Its log is its standard error (descriptor 2). Only the lines kube-scheduler 1.20 writes for an
  // attempt (MakeDefaultErrorFunc's failures, the binding's success) are charged, so that a more
  // verbose log (--scheduler-flag=--v=4) changes nothing but the log.
  if (o_.attempt_cost_ns > 0) {
    env.push_back("VTIME_WRITE_COST=2:" + std::to_string(o_.attempt_cost_ns));
    env.push_back("VTIME_WRITE_MATCH=Unable to schedule|Error scheduling pod|Successfully bound pod");
  }
  // The flush's period, `wait.Until(p.flushBackoffQCompleted, 1.0*time.Second, p.stop)` in
  // PriorityQueue.Run (kube-scheduler 1.20; the closure its `go` statement makes loads the period),
  // lengthened by the drift (tracer/go_constant.h). Another release that loads it elsewhere gets
  // a warning from vtime and no drift.
  if (o_.flush_drift_ns > 0) {
    env.push_back("VTIME_GO_CONSTANT=k8s.io/kubernetes/pkg/scheduler/internal/queue.(*PriorityQueue).Run.func1:"
                  "1000000000:" + std::to_string(1'000'000'000LL + o_.flush_drift_ns));
  }
  start_daemon("kube-scheduler", std::move(argv), std::move(env));
  // Ready when it schedules: a probe Pod (no resources) bound proves that its informers have
  // synced, so every Node written before is in its cache. Its scheduling loop and its queue's
  // periodic flushes start at that instant (their computation takes no virtual time), which is
  // what scheduler_started_ns() tells: looked at every millisecond.
  api_->create_pod({kProbePod, 0, "(probe)", std::nullopt});
  wait_for(
      "kube-scheduler", "to schedule a probe pod",
      [&] {
        auto node = api_->pod_node(kProbePod);
        return node && !node->empty();
      },
      std::chrono::milliseconds(1));
  scheduler_started_ns_ = monotonic_ns();
  api_->delete_pod(kProbePod);
  wait_for("kube-scheduler", "to see the probe pod deleted", [&] { return !api_->pod_node(kProbePod); });
}

void Cluster::check_alive() {
  if (auto dead = daemons_.reap()) throw ClusterError(*dead);
}

void Cluster::stop(bool orderly) {
  if (daemons_.size() == 0) return;
  api_.reset();
  http_.reset();
  // No component has a shutdown request of its own: SIGTERM (in reverse start order: the
  // scheduler before the API server before etcd), then up to 10 virtual seconds to exit.
  daemons_.stop_all(std::chrono::milliseconds(orderly ? 10000 : 0), false);
}

std::string Cluster::scheduler_config(const std::string& user_yaml, const std::string& kubeconfig,
                                      const std::string& health_address, const std::string& where) {
  // No YAML library here: the user's file must be one block mapping (what kube-scheduler
  // reads), so its top-level keys are the lines that start in column 0. The bridge's own keys
  // are appended as top-level keys; the user may not set them.
  std::string out;
  bool api_version = false, kind = false, contention = false;
  std::istringstream in(user_yaml);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string at = where + ":" + std::to_string(n) + ": ";
    if (line.rfind("---", 0) == 0) {
      if (api_version || kind) throw ClusterError(at + "one KubeSchedulerConfiguration document only");
      continue;
    }
    if (!line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '\t') {
      size_t colon = line.find(':');
      if (colon == std::string::npos) throw ClusterError(at + "not a 'key: value' line: " + line);
      std::string key = line.substr(0, colon);
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
      if (key == "clientConnection" || key == "leaderElection" || key == "healthzBindAddress" ||
          key == "metricsBindAddress") {
        throw ClusterError(at + key + " is set by vtime-k8s (the API of this run, no leader election, ports of the run)");
      }
      if (key == "enableContentionProfiling") contention = true;
      if (key == "apiVersion") {
        if (value != "kubescheduler.config.k8s.io/v1beta1") {
          throw ClusterError(at + "apiVersion must be kubescheduler.config.k8s.io/v1beta1 (kube-scheduler 1.20), not " + value);
        }
        api_version = true;
      }
      if (key == "kind") {
        if (value != "KubeSchedulerConfiguration") throw ClusterError(at + "kind must be KubeSchedulerConfiguration, not " + value);
        kind = true;
      }
    }
    out += line + "\n";
  }
  if (!user_yaml.empty() && (!api_version || !kind)) {
    throw ClusterError(where + ": a KubeSchedulerConfiguration needs 'apiVersion: kubescheduler.config.k8s.io/v1beta1' "
                               "and 'kind: KubeSchedulerConfiguration'");
  }
  if (user_yaml.empty()) out = "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n";
  out += "# Added by vtime-k8s:\n";
  out += "clientConnection:\n  kubeconfig: " + kubeconfig + "\n";
  out += "leaderElection:\n  leaderElect: false\n";
  // Its plain-HTTP health and metrics port (0.0.0.0:10251 by default: a second run would
  // collide). With --config, the --port and --address flags are ignored.
  out += "healthzBindAddress: " + health_address + "\nmetricsBindAddress: " + health_address + "\n";
  // On by default, block profiling reads the time-stamp counter at every blocking channel
  // operation, and under vtime each read is a stop of the tracer (docs/tracer.md, Go's
  // randomness): 5,600 in a one-minute run, 80% more wall time. A user's file may turn it on.
  if (!contention) out += "enableContentionProfiling: false\n";
  return out;
}

}  // namespace vtime::k8s
