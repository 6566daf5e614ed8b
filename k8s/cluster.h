// A private Kubernetes control plane for one run: etcd, kube-apiserver, kube-scheduler and
// `kubectl proxy`, as children of the bridge (so they live in virtual time under vtime).
//
// What it is for: vtime-k8s needs the real scheduler deciding against a real API server, with
// nothing on the machine shared between runs: every component gets loopback ports of its own,
// its data, certificates, credentials and logs in the run's directory, and dies with the bridge.
// No kubelet runs: the bridge writes the Nodes itself (docs/k8s.md).
//
// Example:
//     ClusterOptions o{.dir = "/tmp/out_k8s", .bin_dir = "/var/cache/vtime/kubernetes-1.20.2/bin"};
//     Cluster c(o);
//     c.start();                  // etcd, apiserver, proxy; ready when the API answers
//     c.api().create_node({"host0", 1});
//     c.start_scheduler();        // ready once it has bound a probe pod
//     ...
//     c.stop(true);
#pragma once

#include "daemon_set.h"
#include "loopback_ports.h"
#include "http_client.h"
#include "kube_api.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vtime::k8s {

struct ClusterOptions {
  std::string dir;                         // the run's directory (exists)
  std::string bin_dir;                     // kube-apiserver, kube-scheduler, kubectl; "" = PATH
  std::string etcd = "etcd";               // etcd's executable
  std::string scheduler_config;            // the user's KubeSchedulerConfiguration (YAML), may be empty
  std::vector<std::string> scheduler_flags;  // extra kube-scheduler flags
  std::vector<std::string> apiserver_flags;  // extra kube-apiserver flags
  // NAME=VALUE added to the components' environment, which is otherwise defined by the run, not
  // inherited (component_env.h).
  std::vector<std::string> component_env;
  std::chrono::seconds start_timeout{300};  // virtual seconds each component may take to come up
  // Virtual time each line kube-scheduler writes to its log costs it (0: none): at --v=2 a line
  // per failed scheduling attempt and per binding (charged by vtime's tracer, trace_request.h).
  long long attempt_cost_ns = 0;
  // Virtual time each fsync/fdatasync of etcd takes (its write-ahead log: every write through the
  // API waits for one), 0: none (charged by vtime's tracer, trace_request.h).
  long long sync_latency_ns = 0;
  // How much longer than its 1 s each period of kube-scheduler's flush of its back-off queue is
  // (0: none): the drift of a real flush loop, whose timer is late and which arms its next second
  // after it ran (vtime's tracer replaces the period's constant in its code, go_constant.h).
  long long flush_drift_ns = 0;
};

// Where k8s/install-kubernetes leaves kube-apiserver, kube-scheduler and kubectl: $VTIME_K8S_BIN,
// else $VTIME_K8S_CACHE/bin (default /var/cache/vtime/kubernetes-1.20.2/bin) when it holds
// them; "" for PATH.
std::string default_bin_dir();

// This process's CLOCK_MONOTONIC in ns: virtual under vtime (the shim's clock).
long long monotonic_ns();

struct ClusterError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions o);
  ~Cluster();

  // Starts etcd, kube-apiserver and kubectl proxy; returns when the API is ready. Throws
  // ClusterError naming the component (and quoting its log) when one fails or times out.
  void start();
  // Starts kube-scheduler and returns once it has bound a probe Pod (so its informers hold
  // every Node created before), after deleting that Pod.
  void start_scheduler();
  KubeApi& api() { return *api_; }
  const std::string& proxy_socket() const { return proxy_socket_; }
  // When start_scheduler() saw kube-scheduler's first binding (CLOCK_MONOTONIC, to 1 ms): the
  // phase of its one-second loops.
  long long scheduler_started_ns() const { return scheduler_started_ns_; }
  // Pidfds of the components, readable when one exits; check_alive() then names it.
  std::vector<int> fds() const { return daemons_.fds(); }
  void check_alive();
  // Stops every component (reverse order of start). orderly: SIGTERM and a grace period first.
  void stop(bool orderly);

  // The user's scheduler configuration completed with what the bridge decides (where the API
  // is, no leader election, the health port `health_address`). Throws ClusterError for what cannot work: another kind or API
  // version, several documents, a key the bridge sets. Public for the unit tests.
  static std::string scheduler_config(const std::string& user_yaml, const std::string& kubeconfig,
                                      const std::string& health_address, const std::string& where);

 private:
  std::string bin(const std::string& name) const;
  void start_daemon(const std::string& name, std::vector<std::string> argv, std::vector<std::string> extra_env = {});
  void write_credentials();
  template <class F>
  void wait_for(const std::string& component, const std::string& what, F ready,
                std::chrono::milliseconds step = std::chrono::milliseconds(10));

  ClusterOptions o_;
  bridges::DaemonSet daemons_;
  std::string token_;
  std::optional<bridges::LoopbackPorts> ports_;  // reserved for the run (loopback_ports.h)
  std::string kubeconfig_;
  std::vector<std::string> env_;  // the components' environment (component_env.h)
  std::string proxy_socket_;
  long long scheduler_started_ns_ = 0;
  int etcd_port_ = 0, etcd_peer_port_ = 0, apiserver_port_ = 0, scheduler_port_ = 0,
      scheduler_insecure_port_ = 0;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<KubeApi> api_;
};

}  // namespace vtime::k8s
