// Unit tests of vtime-k8s's pieces that need no cluster: HTTP framing (http_client.h), the API's
// JSON (kube_api.h), the scheduler configuration the bridge writes (cluster.h) and the
// components' environment (component_env.h).
#include "cluster.h"
#include "component_env.h"
#include "http_client.h"
#include "kube_api.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace vtime::k8s {
namespace {

// Feeds a response split at every possible point: framing must not depend on how bytes arrive.
void expect_body_at_every_split(const std::string& bytes, int status, const std::string& body) {
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    ResponseParser p;
    p.feed(bytes.substr(0, cut));
    std::string got = p.take_body();
    p.feed(bytes.substr(cut));
    got += p.take_body();
    ASSERT_TRUE(p.complete()) << "cut at " << cut;
    EXPECT_EQ(p.status(), status);
    EXPECT_EQ(got, body) << "cut at " << cut;
  }
}

TEST(ResponseParser, ContentLengthBody) {
  expect_body_at_every_split("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
                             201, "{\"a\":1}");
}

TEST(ResponseParser, ChunkedBodyWithExtensionsAndTrailers) {
  expect_body_at_every_split(
      "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n4;x=y\r\nabcd\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", 200,
      "abcd0123456789");
}

TEST(ResponseParser, InterimResponseIsSkipped) {
  expect_body_at_every_split("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno", 404,
                             "no");
}

TEST(ResponseParser, BodyUntilEndOfConnection) {
  ResponseParser p;
  p.feed("HTTP/1.0 200 OK\r\n\r\nsome");
  p.feed(" bytes");
  EXPECT_FALSE(p.complete());
  p.feed_eof();
  EXPECT_TRUE(p.complete());
  EXPECT_EQ(p.take_body(), "some bytes");
}

TEST(ResponseParser, RefusesWhatIsNotHttp) {
  ResponseParser a;
  EXPECT_THROW(a.feed("SSH-2.0-OpenSSH\r\n"), HttpError);
  ResponseParser b;
  EXPECT_THROW(b.feed("HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n"), HttpError);
  ResponseParser c;
  EXPECT_THROW(c.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), HttpError);
  ResponseParser d;
  EXPECT_THROW(d.feed("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"), HttpError);
}

TEST(ResponseParser, ConnectionClosedMidBodyIsAnError) {
  ResponseParser p;
  p.feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  EXPECT_THROW(p.feed_eof(), HttpError);
}

// A Unix-socket server that answers the first request of each connection with `answer`, then
// either closes the connection (`close_after`) or keeps it open and never answers on it again;
// counts the requests it read.
class FirstAnswerServer {
 public:
  FirstAnswerServer(std::string answer, bool close_after) : answer_(std::move(answer)), close_after_(close_after) {
    char dir[] = "/tmp/vtime-http-test-XXXXXX";
    dir_ = mkdtemp(dir);
    path_ = dir_ + "/api.sock";
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path_.copy(a.sun_path, sizeof a.sun_path - 1);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~FirstAnswerServer() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }
  int requests() const { return requests_.load(); }

 private:
  void serve() {
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    std::vector<int> answered{0};
    while (!stop_) {
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
        char buf[4096];
        if (read(fds[i].fd, buf, sizeof buf) <= 0) {
          close(fds[i].fd);
          fds[i].fd = -1;
          continue;
        }
        ++requests_;
        if (answered[i]++ == 0) {
          EXPECT_EQ(write(fds[i].fd, answer_.data(), answer_.size()), static_cast<ssize_t>(answer_.size()));
          if (close_after_) {
            close(fds[i].fd);
            fds[i].fd = -1;
          }
        }
      }
      if (fds[0].revents & POLLIN) {
        int fd = accept(listen_fd_, nullptr, nullptr);
        if (fd >= 0) {
          fds.push_back({fd, POLLIN, 0});
          answered.push_back(0);
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].fd >= 0) close(fds[i].fd);
    }
  }
  std::string answer_;
  bool close_after_;
  std::string dir_, path_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

const char* kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

TEST(HttpClient, ARequestTheServerDidNotAnswerInTimeIsNotSentAgain) {
  // On a kept-alive connection, a POST the server read but did not answer in time may have been
  // acted on: sending it again would create the object twice (seen: the API answered 409 to
  // vtime-k8s's probe Pod under the timeout policy).
  FirstAnswerServer server(kOk, false);
  HttpClient c(server.path(), std::chrono::milliseconds(100));
  EXPECT_EQ(c.request("GET", "/readyz").body, "ok");
  EXPECT_THROW(c.request("POST", "/api/v1/namespaces/default/pods", "{}"), HttpTimeout);
  EXPECT_EQ(server.requests(), 2);
}

TEST(HttpClient, AKeepAliveConnectionTheServerClosedIsOpenedAgainOnce) {
  FirstAnswerServer server(kOk, true);
  HttpClient c(server.path(), std::chrono::milliseconds(2000));
  EXPECT_EQ(c.request("GET", "/readyz").body, "ok");
  // The server closed that connection after answering: the next request finds it closed and
  // goes again on a fresh one.
  EXPECT_EQ(c.request("GET", "/readyz").body, "ok");
  EXPECT_EQ(server.requests(), 2);
}

TEST(KubeApi, PodEventsReduceToNameNodeAndVersion) {
  auto e = KubeApi::parse_pod_event(
      R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"job-3","resourceVersion":"812"},)"
      R"("spec":{"nodeName":"host7","containers":[]},"status":{"phase":"Pending"}}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, PodEvent::modified);
  EXPECT_EQ(e->name, "job-3");
  EXPECT_EQ(e->node, "host7");
  EXPECT_EQ(e->resource_version, "812");
  EXPECT_EQ(e->phase, "Pending");

  auto unbound = KubeApi::parse_pod_event(R"({"type":"ADDED","object":{"metadata":{"name":"job-4"},"spec":{}}})");
  ASSERT_TRUE(unbound);
  EXPECT_EQ(unbound->kind, PodEvent::added);
  EXPECT_EQ(unbound->node, "");

  auto err = KubeApi::parse_pod_event(
      R"j({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (5)","code":410}})j");
  ASSERT_TRUE(err);
  EXPECT_EQ(err->kind, PodEvent::error);
  EXPECT_EQ(err->message, "too old resource version: 1 (5)");

  EXPECT_FALSE(KubeApi::parse_pod_event("not json"));
  EXPECT_FALSE(KubeApi::parse_pod_event(R"({"type":"ADDED"})"));
  EXPECT_FALSE(KubeApi::parse_pod_event(R"([1,2])"));
}

TEST(KubeApi, NodesAreReadyWithTheirCpus) {
  auto j = nlohmann::json::parse(KubeApi::node_json({"host-3", 4}));
  EXPECT_EQ(j["metadata"]["name"], "host-3");
  EXPECT_EQ(j["status"]["allocatable"]["cpu"], "4");
  EXPECT_EQ(j["status"]["capacity"]["cpu"], "4");
  EXPECT_EQ(j["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(j["status"]["conditions"][0]["status"], "True");
}

TEST(KubeApi, PodsRequestTheirCpusAndKeepTheBatsimId) {
  auto j = nlohmann::json::parse(KubeApi::pod_json({"job-12", 1, "w0!12 'odd\" id", 7}));
  EXPECT_EQ(j["metadata"]["name"], "job-12");
  EXPECT_EQ(j["metadata"]["annotations"]["vtime/batsim-job-id"], "w0!12 'odd\" id");
  EXPECT_EQ(j["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1");
  EXPECT_EQ(j["spec"]["terminationGracePeriodSeconds"], 0);
  EXPECT_EQ(j["spec"]["priority"], 7);
  EXPECT_EQ(j["spec"]["preemptionPolicy"], "Never");
  auto plain = nlohmann::json::parse(KubeApi::pod_json({"job-1", 1, "1", std::nullopt}));
  EXPECT_FALSE(plain["spec"].contains("priority"));
  EXPECT_FALSE(plain["spec"].contains("preemptionPolicy"));
}

TEST(KubeApi, HostNamesBecomeDnsNames) {
  EXPECT_EQ(KubeApi::dns_name("host0"), "host0");
  EXPECT_EQ(KubeApi::dns_name("Host_3"), "host-3");
  EXPECT_EQ(KubeApi::dns_name("_node.a_"), "node.a");
  EXPECT_EQ(KubeApi::dns_name("!!!"), "host");
}

TEST(SchedulerConfig, DefaultNamesTheApiAndTurnsLeaderElectionOff) {
  std::string c = Cluster::scheduler_config("", "/run/kubeconfig", "127.0.0.1:3000", "(default)");
  EXPECT_NE(c.find("apiVersion: kubescheduler.config.k8s.io/v1beta1\n"), std::string::npos);
  EXPECT_NE(c.find("kind: KubeSchedulerConfiguration\n"), std::string::npos);
  EXPECT_NE(c.find("clientConnection:\n  kubeconfig: /run/kubeconfig\n"), std::string::npos);
  EXPECT_NE(c.find("leaderElection:\n  leaderElect: false\n"), std::string::npos);
  EXPECT_NE(c.find("healthzBindAddress: 127.0.0.1:3000\nmetricsBindAddress: 127.0.0.1:3000\n"), std::string::npos);
  EXPECT_NE(c.find("enableContentionProfiling: false\n"), std::string::npos);
}

TEST(SchedulerConfig, ContentionProfilingIsOffUnlessTheUserTurnsItOn) {
  std::string user =
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
      "kind: KubeSchedulerConfiguration\n"
      "enableContentionProfiling: true\n";
  std::string c = Cluster::scheduler_config(user, "/run/kubeconfig", "127.0.0.1:3000", "my.yaml");
  EXPECT_NE(c.find("enableContentionProfiling: true\n"), std::string::npos);
  EXPECT_EQ(c.find("enableContentionProfiling: false"), std::string::npos);
}

TEST(SchedulerConfig, UserProfilesAreKept) {
  std::string user =
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\n"
      "kind: KubeSchedulerConfiguration\n"
      "# most allocated first\n"
      "profiles:\n"
      "  - schedulerName: default-scheduler\n"
      "    plugins:\n"
      "      score:\n"
      "        enabled:\n"
      "          - name: NodeResourcesMostAllocated\n";
  std::string c = Cluster::scheduler_config(user, "/k", "127.0.0.1:1", "my.yaml");
  EXPECT_EQ(c.rfind(user, 0), 0u);
  EXPECT_NE(c.find("clientConnection:\n  kubeconfig: /k\n"), std::string::npos);
}

TEST(SchedulerConfig, RefusesWhatCannotWorkNamingTheLine) {
  auto message = [](const std::string& yaml) {
    try {
      Cluster::scheduler_config(yaml, "/k", "127.0.0.1:1", "my.yaml");
    } catch (const ClusterError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  std::string head = "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n";
  EXPECT_NE(message(head + "leaderElection:\n  leaderElect: true\n").find("my.yaml:3: leaderElection is set by vtime-k8s"),
            std::string::npos);
  EXPECT_NE(message(head + "clientConnection:\n  qps: 5\n").find("my.yaml:3: clientConnection"), std::string::npos);
  EXPECT_NE(message(head + "healthzBindAddress: 0.0.0.0:10251\n").find("my.yaml:3: healthzBindAddress"), std::string::npos);
  EXPECT_NE(message("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n").find("my.yaml:1: apiVersion must be"),
            std::string::npos);
  EXPECT_NE(message("apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: Pod\n").find("my.yaml:2: kind must be"),
            std::string::npos);
  EXPECT_NE(message("profiles: []\n").find("needs 'apiVersion"), std::string::npos);
  EXPECT_NE(message(head + "---\n" + head).find("my.yaml:3: one KubeSchedulerConfiguration document only"),
            std::string::npos);
  EXPECT_NE(message(head + "garbage\n").find("my.yaml:3: not a 'key: value' line"), std::string::npos);
}

}  // namespace
}  // namespace vtime::k8s

namespace vtime::k8s {
namespace {

std::vector<std::string> env_of(std::vector<std::string> vars, const std::vector<std::string>& extra = {}) {
  std::vector<char*> p;
  for (auto& v : vars) p.push_back(v.data());
  p.push_back(nullptr);
  return component_environment(p.data(), extra);
}

TEST(ComponentEnv, KeepsWhatVtimeAndGoNeedAndNothingOfTheCaller) {
  auto env = env_of({"TERM=xterm", "LD_PRELOAD=/lib/shim.so", "VTIME_SESSION=/proc/123/fd/6", "VTIME_LOG=controller=debug",
                     "VTIME_OUTPUT_PREFIX=/home/u/out", "GOMAXPROCS=1", "GOPATH=/go", "ETCD_NAME=x", "PATH=/home/u/bin",
                     "HOME=/home/u", "PWD=/home/u", "TZ=Europe/Paris"});
  std::vector<std::string> want = {"GOMAXPROCS=1",
                                   "HOME=/proc/self/cwd",
                                   "LD_PRELOAD=/lib/shim.so",
                                   "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                   "PWD=/proc/self/cwd",
                                   "TZ=UTC",
                                   "VTIME_SESSION=" + std::string(40 - 14, '/') + "/proc/123/fd/6"};
  EXPECT_EQ(env, want);
}

TEST(ComponentEnv, TheSessionHasOneLengthWhateverThePidAndTheOrderDoesNotMatter) {
  auto a = env_of({"VTIME_SESSION=/proc/99/fd/3", "GOGC=50"});
  auto b = env_of({"GOGC=50", "VTIME_SESSION=/proc/4194303/fd/12"});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].size(), b[i].size()) << a[i] << " vs " << b[i];
  EXPECT_NE(a, b);
}

TEST(ComponentEnv, ExtrasAddOrReplaceAndMustBeNameEqualsValue) {
  auto env = env_of({"GODEBUG=x=1"}, {"GODEBUG=gctrace=1", "MY_VAR=a=b"});
  EXPECT_NE(std::find(env.begin(), env.end(), "GODEBUG=gctrace=1"), env.end());
  EXPECT_EQ(std::find(env.begin(), env.end(), "GODEBUG=x=1"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "MY_VAR=a=b"), env.end());
  EXPECT_THROW(env_of({}, {"NOEQUALS"}), std::invalid_argument);
  EXPECT_THROW(env_of({}, {"=value"}), std::invalid_argument);
}

}  // namespace
}  // namespace vtime::k8s
