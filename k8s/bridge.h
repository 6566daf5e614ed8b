// vtime-k8s's Batsim conversation: Batsim on one side, a private Kubernetes control plane on the
// other (etcd, kube-apiserver and kube-scheduler, unmodified; cluster.h).
//
// What it is for: a Batsim scheduler (it binds the REP endpoint like any other) whose decisions
// are kube-scheduler's. At SIMULATION_BEGINS it starts the control plane as its own children
// (so they run under the same virtual clock), writes one Ready Node per compute host, and
// answers once the scheduler is up; each JOB_SUBMITTED becomes a Pod at that virtual instant;
// when the scheduler binds a Pod, the bridge hears it on a watch and sends EXECUTE_JOB on that
// Node's host; JOB_COMPLETED deletes the Pod, which frees the Node for the scheduler. Bindings
// heard after a reply are handed over in the reply to a tick the bridge asks the broker for
// (vtime_request_tick), in submission order, so traces do not depend on timing.
//
// Example:
//     BridgeOptions o{.endpoint = "ipc:///tmp/x/sched", .dir = "/tmp/out_k8s"};
//     return run_bridge(o);   // exit codes below
#pragma once

#include <string>
#include <vector>

namespace vtime::k8s {

inline constexpr int kBridgeOk = 0;
inline constexpr int kBridgeK8sFailed = 1;  // a component failed or Kubernetes misbehaved (named on stderr)
inline constexpr int kBridgeUsage = 2;      // bad command line, configuration file or directory
inline constexpr int kBridgeProtocol = 3;   // Batsim sent something invalid, or ZeroMQ failed

struct BridgeOptions {
  std::string endpoint;             // ZeroMQ endpoint to bind (REP)
  std::string dir;                  // the run's directory (created; kept afterwards)
  std::string bin_dir;              // where kube-apiserver, kube-scheduler and kubectl are
  std::string etcd = "etcd";
  std::string scheduler_config;     // the user's KubeSchedulerConfiguration, may be empty
  std::vector<std::string> scheduler_flags;
  std::vector<std::string> apiserver_flags;
  std::vector<std::string> component_env;  // NAME=VALUE for the components (component_env.h)
  int node_cpus = 1;                // each Node's cpu capacity
  // Pods get priorities decreasing with submission order (preemptionPolicy Never), so the
  // scheduler's queue never holds two Pods it cannot order (docs/k8s.md, Determinism). Off by
  // default: priority 0, as a real cluster's Pods, whose queue order (each Pod's last attempt)
  // the attempt cost makes deterministic.
  bool submission_priority = false;
  // Jobs due at one instant become Pods in the numeric order of their ids, as a script replaying
  // a trace creates them (bridges/job_order.h); false: in Batsim's order (string order of ids).
  bool natural_order = true;
  // How long after the bridge sees a Pod bound its job starts (the EXECUTE_JOB): what a real
  // cluster takes from a Pod's creation to its client seeing it bound (the creation, the
  // scheduler's watch, the binding, the client's watch: 13-23 ms measured, docs/k8s.md). A job
  // then ends that long after a whole second, after the Pods created at that second, as in a real
  // cluster; with 0, both fell on one instant. 0: at once. The default since session 43: with the
  // flush's drift below, a job started by a flush ends after the flush that many seconds later
  // when its seconds times the drift are less than this, as in a real cluster (docs/k8s.md).
  long long job_start_latency_ns = 15'000'000;
  // What the API client takes per request (a creation or a deletion and its answer): the client
  // makes one at a time, in the order they were asked for (a deletion before a creation asked for
  // at the same instant), so the Pods due at one instant are created this far apart, the first at
  // once, and a job's end waits behind the creations asked for before it, while the bridge answers
  // Batsim at once. 0: every request at the instant it is asked for.
  long long client_latency_ns = 0;
  // Where kube-scheduler's one-second loops (the back-off queue's flush) fall in each second of
  // the workload: the bridge answers SIMULATION_BEGINS (the workload's time 0) this long before
  // one of their iterations (to within the millisecond at which it sees the scheduler start).
  // In a real cluster that phase is whatever the scheduler's start left: the middle of the second is
  // never more than half a second from it, and with the sync latency it fits the independent
  // references best (docs/k8s.md, "Validation against an independent reference").
  long long loop_phase_ns = 500'000'000;
  // Virtual time each scheduling attempt costs kube-scheduler, charged at the line it logs
  // (ClusterOptions::attempt_cost_ns). 0: none. The default since session 46 (docs/k8s.md): a
  // back-off that ends at the very instant of the event that frees a Node no longer decides who
  // gets it, as a scheduling cycle's own time decides in a real cluster.
  long long attempt_cost_ns = 100'000;
  // Virtual time each durable write of etcd takes (ClusterOptions::sync_latency_ns). 0: none. Every
  // write through the API server waits for one, so the events that follow a write come later, as
  // on a real control plane: the default, with the phase above (docs/k8s.md).
  long long sync_latency_ns = 2'000'000;
  // How much later each iteration of kube-scheduler's one-second flush of its back-off queue comes
  // than the one before (ClusterOptions::flush_drift_ns), as in a real cluster: its timer is late
  // and the loop arms its next second after each run. 0: none. The default, with the sync latency
  // and the phase above (docs/k8s.md).
  long long flush_drift_ns = 1'000'000;
  // One process of the control plane runs at a time (vtime_serialize; docs/k8s.md, Determinism),
  // and with `serialize_threads` one thread of it (vtime_serialize_threads).
  bool serialize = true;
  bool serialize_threads = true;
  // The components in a network namespace of the run's own whose loopback acknowledges at once
  // (bridges/private_network.h): TCP's real-time timers then never decide what a component reads.
  bool private_network = true;
  int start_timeout_s = 300;        // virtual seconds each component may take to come up
};

int run_bridge(const BridgeOptions& o);

}  // namespace vtime::k8s
