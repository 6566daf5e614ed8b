// Typed Kubernetes API calls (see kube_api.h).
#include "kube_api.h"

#include <nlohmann/json.hpp>

#include <cctype>

namespace vtime::k8s {
namespace {

using json = nlohmann::json;
const char* kNamespace = "default";

std::string pods_path() { return std::string("/api/v1/namespaces/") + kNamespace + "/pods"; }

// The API's own explanation of a failed call: a Status object's message, or the body's start.
std::string api_message(const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  return body.substr(0, 300);
}

}  // namespace

HttpResponse KubeApi::call(const char* method, const std::string& path, const std::string& body, int want,
                           const std::string& what) {
  HttpResponse r;
  try {
    r = http_.request(method, path, body);
  } catch (const HttpError& e) {
    throw ApiError(what + ": " + e.what());
  }
  if (r.status != want) throw ApiError(what + ": the API answered " + std::to_string(r.status) + ": " + api_message(r.body));
  return r;
}

bool KubeApi::ready() {
  try {
    HttpResponse r = http_.request("GET", "/readyz");
    return r.status == 200;
  } catch (const HttpError&) {
    return false;
  }
}

bool KubeApi::namespace_ready() {
  try {
    return http_.request("GET", std::string("/api/v1/namespaces/") + kNamespace).status == 200;
  } catch (const HttpError&) {
    return false;
  }
}

std::string KubeApi::node_json(const NodeSpec& n) {
  std::string cpu = std::to_string(n.cpus);
  json resources = {{"cpu", cpu}, {"memory", "1Ti"}, {"pods", "110"}};
  json j = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", n.name}, {"labels", {{"kubernetes.io/hostname", n.name}, {"vtime/node", "true"}}}}},
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"},
                                     {"message", "a Batsim host, managed by vtime-k8s"}}})}}},
  };
  return j.dump();
}

std::string KubeApi::pod_json(const PodSpec& p) {
  std::string cpu = std::to_string(p.cpus);
  json res = {{"cpu", cpu}};
  json j = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", p.name}, {"labels", {{"vtime/job", "true"}}}, {"annotations", {{"vtime/batsim-job-id", p.batsim_id}}}}},
      {"spec",
       {{"containers", json::array({{{"name", "job"}, {"image", "vtime/batsim-job"},
                                     {"resources", {{"requests", res}, {"limits", res}}}}})},
        {"restartPolicy", "Never"},
        {"terminationGracePeriodSeconds", 0}}},
  };
  if (p.priority) {
    j["spec"]["priority"] = *p.priority;
    j["spec"]["preemptionPolicy"] = "Never";
  }
  return j.dump();
}

void KubeApi::create_node(const NodeSpec& n) { call("POST", "/api/v1/nodes", node_json(n), 201, "creating node " + n.name); }

void KubeApi::create_pod(const PodSpec& p) { call("POST", pods_path(), pod_json(p), 201, "creating pod " + p.name); }

void KubeApi::delete_pod(const std::string& name) {
  HttpResponse r;
  try {
    r = http_.request("DELETE", pods_path() + "/" + name, R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  } catch (const HttpError& e) {
    throw ApiError("deleting pod " + name + ": " + e.what());
  }
  if (r.status != 200 && r.status != 202 && r.status != 404) {
    throw ApiError("deleting pod " + name + ": the API answered " + std::to_string(r.status) + ": " + api_message(r.body));
  }
}

std::optional<std::string> KubeApi::pod_node(const std::string& name) {
  HttpResponse r;
  try {
    r = http_.request("GET", pods_path() + "/" + name);
  } catch (const HttpError& e) {
    throw ApiError("reading pod " + name + ": " + e.what());
  }
  if (r.status == 404) return std::nullopt;
  if (r.status != 200) throw ApiError("reading pod " + name + ": the API answered " + std::to_string(r.status));
  auto j = json::parse(r.body, nullptr, false);
  json::json_pointer p("/spec/nodeName");
  if (j.is_object() && j.contains(p) && j.at(p).is_string()) return j.at(p).get<std::string>();
  return std::string();
}

std::string KubeApi::pods_resource_version() {
  HttpResponse r = call("GET", pods_path(), "", 200, "listing pods");
  auto j = json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("metadata") || !j["metadata"].contains("resourceVersion")) {
    throw ApiError("listing pods: the answer has no resourceVersion");
  }
  return j["metadata"]["resourceVersion"].get<std::string>();
}

std::string KubeApi::pod_watch_path(const std::string& resource_version) {
  // Without timeoutSeconds the API server ends a watch after a random 30-60 virtual minutes
  // (--min-request-timeout); the bridge would then open a new one at an instant drawn from the
  // server's random numbers. Ten years is longer than any simulation. Should the server end it
  // anyway, the bridge resumes from the last version it saw.
  return pods_path() + "?watch=1&allowWatchBookmarks=false&timeoutSeconds=315360000&resourceVersion=" +
         resource_version;
}

std::optional<PodEvent> KubeApi::parse_pod_event(const std::string& line) {
  auto j = json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string() || !j.contains("object") ||
      !j["object"].is_object()) {
    return std::nullopt;
  }
  PodEvent e;
  std::string type = j["type"].get<std::string>();
  e.kind = type == "ADDED" ? PodEvent::added
         : type == "MODIFIED" ? PodEvent::modified
         : type == "DELETED" ? PodEvent::deleted
         : type == "ERROR" ? PodEvent::error
                           : PodEvent::other;
  const json& o = j["object"];
  if (e.kind == PodEvent::error) {
    e.message = o.value("message", std::string("(no message)"));
    return e;
  }
  auto str = [&](const char* ptr) {
    json::json_pointer p(ptr);
    return o.contains(p) && o.at(p).is_string() ? o.at(p).get<std::string>() : std::string();
  };
  e.name = str("/metadata/name");
  e.resource_version = str("/metadata/resourceVersion");
  e.node = str("/spec/nodeName");
  e.phase = str("/status/phase");
  return e;
}

std::string KubeApi::dns_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
    else if (c == '-' || c == '.') out += c;
    else out += '-';
  }
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.front()))) out.erase(0, 1);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  if (out.size() > 200) out.resize(200);
  if (out.empty()) out = "host";
  return out;
}

}  // namespace vtime::k8s
