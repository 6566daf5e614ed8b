// vtime-k8s: a Batsim scheduler that is Kubernetes' own kube-scheduler (docs/k8s.md).
//
//   vtime run -p PLATFORM -w WORKLOAD -e PREFIX -- vtime-k8s -s {endpoint} [--scheduler-config FILE]
//
// Exit codes: 0 done; 1 a Kubernetes component failed (named, with the end of its log); 2 bad
// command line, configuration file or directory; 3 invalid message from Batsim or ZeroMQ error.
#include "bridge.h"
#include "cluster.h"
#include "duration_option.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>

int main(int argc, char** argv) {
  vtime::k8s::BridgeOptions o;
  o.endpoint = "tcp://*:28000";
  o.bin_dir = vtime::k8s::default_bin_dir();
  if (const char* prefix = std::getenv("VTIME_OUTPUT_PREFIX"); prefix && *prefix) {
    o.dir = std::string(prefix) + "_k8s";
  }
  CLI::App app{
      "vtime-k8s: a Batsim scheduler whose decisions are Kubernetes'. Runs a private control plane\n"
      "(etcd, kube-apiserver, kube-scheduler, unmodified) as its own children, makes every compute\n"
      "host a Ready Node and every job a Pod, and reports the bindings the scheduler decides. Meant\n"
      "to run under `vtime run`, so that Kubernetes lives in virtual time. Exit status: 0 done; 1 a\n"
      "Kubernetes component failed; 2 bad command line, configuration or directory; 3 invalid\n"
      "message from Batsim. See docs/k8s.md."};
  app.add_option("-s,--socket-endpoint", o.endpoint, "ZeroMQ endpoint to bind (REP)")->capture_default_str();
  app.add_option("--scheduler-config", o.scheduler_config,
                 "A KubeSchedulerConfiguration (YAML, kubescheduler.config.k8s.io/v1beta1): profiles, plugins, "
                 "weights; the bridge adds where the API is and turns leader election off")
      ->option_text("FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--scheduler-flag", o.scheduler_flags, "An extra kube-scheduler flag, e.g. --scheduler-flag=--v=4 "
                                                        "(repeatable)")
      ->option_text("FLAG")
      ->allow_extra_args(false);
  app.add_option("--apiserver-flag", o.apiserver_flags, "An extra kube-apiserver flag (repeatable)")
      ->option_text("FLAG")
      ->allow_extra_args(false);
  app.add_option("--component-env", o.component_env,
                 "NAME=VALUE added to the environment of etcd, kube-apiserver, kubectl and kube-scheduler "
                 "(repeatable), e.g. GODEBUG=gctrace=1. Their environment is otherwise defined by the run, not "
                 "inherited: vtime's own (LD_PRELOAD, VTIME_SESSION, VTIME_TSC), the Go runtime's settings "
                 "(GOMAXPROCS, GODEBUG, GOGC, GOMEMLIMIT, GOTRACEBACK), a fixed PATH, PWD and HOME naming DIR, "
                 "TZ=UTC, because a Go component's tie-breaking depends on its environment (docs/k8s.md)")
      ->option_text("NAME=VALUE")
      ->allow_extra_args(false)
      ->check([](const std::string& v) {
        auto eq = v.find('=');
        return eq == std::string::npos || eq == 0 ? std::string("expected NAME=VALUE") : std::string();
      });
  app.add_option("--node-cpus", o.node_cpus, "Each Node's cpu capacity (a Batsim host is one Node)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string priority = "none";
  app.add_option("--pod-priority", priority,
                 "none: every Pod has priority 0, as in a cluster without PriorityClasses; kube-scheduler's queue "
                 "then orders waiting Pods by their last attempt, as a real one does, and --attempt-cost keeps "
                 "those instants distinct (with --attempt-cost 0, Pods that fail at one instant tie and Go's "
                 "randomized map order breaks the tie: runs may differ); submission: Pods get priorities "
                 "decreasing with submission order (never preempting), so the queue is first-submitted first, "
                 "identically in every run whatever the costs (docs/k8s.md)")
      ->check(CLI::IsMember({"submission", "none"}))
      ->capture_default_str();
  std::string order = "natural";
  app.add_option("--submit-order", order,
                 "Order in which jobs due at one instant become Pods: natural (numeric ids: 9 before 10, as a "
                 "script replaying a trace creates them) or batsim (Batsim's order: string order of ids)")
      ->capture_default_str()
      ->check(CLI::IsMember({"natural", "batsim"}));
  vtime::bridges::add_duration_option(app, "--job-start-latency", o.job_start_latency_ns,
                                      "Virtual time from the scheduler binding a Pod to its job's start: what a real "
                                      "cluster takes from a Pod's creation to its client seeing it bound (docs/k8s.md)",
                                      "15ms");
  vtime::bridges::add_duration_option(app, "--client-latency", o.client_latency_ns,
                                      "Virtual time the API client takes per request: Pods due at one instant are "
                                      "created one after another this far apart, the first at once, and a Pod's "
                                      "deletion waits behind the creations asked for before it, as a real client's "
                                      "requests each wait for the answer to the one before (docs/k8s.md)",
                                      "0", 1e10);
  vtime::bridges::add_duration_option(app, "--loop-phase", o.loop_phase_ns,
                                      "Where kube-scheduler's one-second loops (the back-off queue's flush) fall in each "
                                      "second of the workload, from 0 to 1 s: the workload starts that long before one "
                                      "of their iterations. A real cluster's is whatever its start left; the default, "
                                      "the middle of the second, is never more than half a second from it (docs/k8s.md)",
                                      "500ms")
      ->check([](const std::string& v) {
        double ns = std::strtod(v.c_str(), nullptr);
        return ns >= 0 && ns < 1e9 ? std::string() : std::string("a phase is from 0 to under 1 s");
      });
  vtime::bridges::add_duration_option(app, "--attempt-cost", o.attempt_cost_ns,
                                      "Virtual time each scheduling attempt costs kube-scheduler, charged at the line it "
                                      "logs for it (one per failed attempt and per binding, at any --v; its other lines "
                                      "cost nothing), so that attempts at one instant follow each other as in a real "
                                      "cluster (docs/k8s.md); 0 for none",
                                      "100us", 1e10);
  vtime::bridges::add_duration_option(app, "--etcd-sync-latency", o.sync_latency_ns,
                                      "Virtual time each fsync of etcd takes: what its disk takes to make a write "
                                      "durable, for which every write through the API server waits (docs/k8s.md); 0 for none",
                                      "2ms", 1e10);
  vtime::bridges::add_duration_option(app, "--flush-drift", o.flush_drift_ns,
                                      "How much later each iteration of kube-scheduler's one-second flush of its back-off "
                                      "queue comes than the one before: a real one's timer is late and it arms its next "
                                      "second after running (0.7 ms a second in the reference runs; under a frozen clock "
                                      "Go's poller makes any drift below 1 ms a whole one), so a job started by a flush "
                                      "does not end on the very instant of a later one (docs/k8s.md); 0 for none",
                                      "1ms", 1e9);
  std::string serial = "threads";
  app.add_option("--serialize", serial,
                 "threads: one thread of the control plane runs at a time under vtime (a component whose wait ends "
                 "while another runs waits until that one is idle, and so does a thread of a component woken by "
                 "another of its threads), so what each reads from its sockets at one virtual instant, and the "
                 "order in which a Go runtime's threads take its processor, do not depend on real-time races; on: "
                 "one component at a time, its threads together (about a tenth faster; schedules of long workloads may "
                 "differ between runs); off: they run concurrently, as in a real cluster (docs/k8s.md)")
      ->check(CLI::IsMember({"on", "threads", "off"}))
      ->capture_default_str();
  std::string network = "private";
  app.add_option("--network", network,
                 "private: the components run in a network namespace of the run's own, whose loopback "
                 "acknowledges every TCP segment at once, so TCP's real-time timers (delayed acknowledgements, "
                 "loss probes) never decide what a component reads, and the run's ports collide with nothing "
                 "(needs root; otherwise a warning and the host's network); host: the host's loopback (docs/k8s.md)")
      ->check(CLI::IsMember({"private", "host"}))
      ->capture_default_str();
  app.add_option("--dir", o.dir,
                 "The run's directory: configuration, credentials, etcd's data, the components' logs "
                 "(default: PREFIX_k8s under `vtime run -e PREFIX`)")
      ->option_text("DIR");
  app.add_option("--k8s-bin", o.bin_dir,
                 "Where kube-apiserver, kube-scheduler and kubectl are (default: $VTIME_K8S_BIN, else "
                 "/var/cache/vtime/kubernetes-1.20.2/bin as k8s/install-kubernetes leaves them, else PATH)")
      ->option_text("DIR");
  app.add_option("--etcd", o.etcd, "etcd's executable")->capture_default_str();
  app.add_option("--start-timeout", o.start_timeout_s, "Virtual seconds each component may take to come up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.set_version_flag("--version", "vtime-k8s " VTIME_VERSION);
  // `vtime validate --bridge-arg` checks the user's options this way before its real-time runs,
  // which take minutes, rather than finding a typo after them.
  bool check_only = false;
  app.add_flag("--check", check_only, "Check the command line and exit (0: it would be accepted)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : vtime::k8s::kBridgeUsage;
  }
  o.submission_priority = priority == "submission";
  o.natural_order = order == "natural";
  o.serialize = serial != "off";
  o.serialize_threads = serial == "threads";
  o.private_network = network == "private";
  if (!o.submission_priority && o.attempt_cost_ns <= 0) {
    std::fprintf(stderr,
                 "vtime-k8s: warning: --pod-priority none with --attempt-cost 0: Pods that fail at one virtual "
                 "instant tie in kube-scheduler's queue, and Go's randomized map order breaks the tie (runs may "
                 "differ; docs/k8s.md)\n");
  }
  if (check_only) return 0;
  if (o.dir.empty()) {
    std::fprintf(stderr, "vtime-k8s: give --dir DIR (or run it under `vtime run -e PREFIX`)\n");
    return vtime::k8s::kBridgeUsage;
  }
  return vtime::k8s::run_bridge(o);
}
