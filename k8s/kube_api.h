// The few Kubernetes API calls vtime-k8s makes, typed.
//
// What it is for: the bridge maps Batsim hosts to Nodes and jobs to Pods, and learns where the
// scheduler put each Pod from a watch. This file turns those into HTTP requests and JSON
// (through http_client.h) and back into plain structs, so the bridge never touches JSON.
//
// Example:
//     KubeApi api(http);
//     api.create_node({"host0", 1});
//     api.create_pod({"job-0", 1, "w0!0"});
//     std::string rv = api.pods_resource_version();
//     WatchStream w(sock, KubeApi::pod_watch_path(rv), timeout);
//     for (auto& line : w.read_available()) if (auto e = KubeApi::parse_pod_event(line)) ...;
#pragma once

#include "http_client.h"

#include <optional>
#include <string>

namespace vtime::k8s {

struct ApiError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NodeSpec {
  std::string name;
  int cpus = 1;
};

struct PodSpec {
  std::string name;       // "job-<n>": a DNS label the bridge makes
  int cpus = 1;           // requests and limits
  std::string batsim_id;  // kept as an annotation, for people reading the API
  std::optional<int> priority;  // spec.priority, with preemptionPolicy Never; none: 0
};

// One event of a watch on Pods, reduced to what the bridge needs.
struct PodEvent {
  enum Kind { added, modified, deleted, error, other } kind = other;
  std::string name;
  std::string node;       // spec.nodeName, empty while unscheduled
  std::string phase;
  std::string resource_version;
  std::string message;    // for error events: the API's status message
};

class KubeApi {
 public:
  explicit KubeApi(HttpClient& http) : http_(http) {}

  // The API answers /readyz with "ok".
  bool ready();
  // The API server's own bootstrap controller creates the namespace the bridge uses, shortly
  // after it says it is ready.
  bool namespace_ready();
  void create_node(const NodeSpec& n);
  void create_pod(const PodSpec& p);
  // Deletes at once (grace period 0: no kubelet will ever confirm a graceful deletion). A Pod
  // that is already gone is not an error.
  void delete_pod(const std::string& name);
  // The node a Pod is bound to ("" while it is not; nullopt when there is no such Pod).
  std::optional<std::string> pod_node(const std::string& name);
  // The resource version of the Pod list, to start a watch from.
  std::string pods_resource_version();

  static std::string pod_watch_path(const std::string& resource_version);
  // nullopt for a line that is not a watch event (the caller reports it).
  static std::optional<PodEvent> parse_pod_event(const std::string& line);
  // Kubernetes' object names: lowercase DNS-1123 subdomain. Batsim host names such as
  // "Host_3" become "host-3"; the caller keeps names unique.
  static std::string dns_name(const std::string& name);

  static std::string node_json(const NodeSpec& n);
  static std::string pod_json(const PodSpec& p);

 private:
  HttpResponse call(const char* method, const std::string& path, const std::string& body, int want,
                    const std::string& what);
  HttpClient& http_;
};

}  // namespace vtime::k8s
