// vtime-k8s's conversation loop (see bridge.h).
#include "bridge.h"

#include "cluster.h"
#include "bridge_run.h"
#include "job_order.h"
#include "private_network.h"
#include "vtime_hooks.h"

#include <vtime/protocol/codec.h>

#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <zmq.hpp>

namespace vtime::k8s {
namespace {

using namespace vtime::protocol;

// The host name the components see, on every machine.
constexpr const char* kHostName = "vtime-k8s";

// The highest priority a user-defined Pod may have (Kubernetes' HighestUserDefinablePriority).
constexpr int kTopPriority = 1'000'000'000;

// Ends the run with an exit code and one message for the user (bridge_run.h).
using Fail = bridges::BridgeFailure;

class Bridge {
 public:
  explicit Bridge(const BridgeOptions& o) : o_(o) {
    prepare_dir();
    ClusterOptions c;
    c.dir = dir_;
    c.bin_dir = o.bin_dir;
    c.etcd = o.etcd;
    c.scheduler_config = o.scheduler_config;
    c.scheduler_flags = o.scheduler_flags;
    c.apiserver_flags = o.apiserver_flags;
    c.component_env = o.component_env;
    c.start_timeout = std::chrono::seconds(o.start_timeout_s);
    c.attempt_cost_ns = o.attempt_cost_ns;
    c.sync_latency_ns = o.sync_latency_ns;
    c.flush_drift_ns = o.flush_drift_ns;
    cluster_ = std::make_unique<Cluster>(std::move(c));
    sock_ = zmq::socket_t(ctx_, zmq::socket_type::rep);
    sock_.set(zmq::sockopt::linger, 1000);
    sock_.bind(o.endpoint);
    // After the bind (a tcp:// endpoint stays reachable from the host), before any component.
    if (o.private_network) enter_network();
    // Every component reads the host name (kube-scheduler writes it into its events): one name
    // for every run on every machine (bridges/private_network.h).
    if (auto why = bridges::enter_private_hostname(kHostName)) {
      fprintf(stderr, "vtime-k8s: warning: the components see this machine's host name (%s), so schedules may "
                      "differ from a run on another machine; run as root (docs/k8s.md)\n", why->c_str());
    }
    // Every decision of ours is a binding heard on the watch, which asks for a tick: the timers
    // of etcd, the API server and the scheduler have nothing to tell Batsim by themselves.
    bridges::ticks_on_request();
    // Before the components start (their filters are installed when they are executed).
    if (o.serialize_threads) {
      bridges::serialize_threads();
    } else if (o.serialize) {
      bridges::serialize();
    }
    if (int m = bridges::cpu_model(); m > 0) {
      fprintf(stderr, "vtime-k8s: warning: the CPU-time model is %s: Kubernetes' components then pay virtual time "
                      "for clock reads whose number varies from run to run, so schedules may too; use --cpu-model "
                      "zero (the default of `vtime k8s`), see docs/k8s.md\n",
              m == 1 ? "calls" : "real");
    }
  }

  // Only this thread and the children it makes from now on change namespace: ZeroMQ's threads
  // keep the host's network, which an ipc:// endpoint (vtime run's) does not need anyway.
  void enter_network() {
    auto net = bridges::enter_private_network();
    switch (net.where) {
      case bridges::Network::kPrivate:
        if (!net.why.empty()) {
          fprintf(stderr, "vtime-k8s: warning: the run's loopback acknowledges with TCP's usual delays (%s); "
                          "schedules may then differ between runs (docs/k8s.md)\n", net.why.c_str());
        }
        break;
      case bridges::Network::kHost:
        fprintf(stderr, "vtime-k8s: warning: no network namespace of the run's own (%s): the components use the "
                        "host's loopback, whose delayed acknowledgements run in real time, so schedules may differ "
                        "between runs; run as root, or pass --network host to silence this (docs/k8s.md)\n",
                net.why.c_str());
        break;
      case bridges::Network::kBroken:
        throw std::runtime_error("the run's network namespace: " + net.why);
    }
  }

  ~Bridge() {
    if (timer_fd_ >= 0) close(timer_fd_);
  }
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  int run() {
    try {
      loop();
      return kBridgeOk;
    } catch (const Fail& f) {
      fprintf(stderr, "vtime-k8s: %s\n", f.what());
      cluster_->stop(false);
      return f.code;
    }
  }

 private:
  struct ClientOp {
    long long asked_ns;  // CLOCK_MONOTONIC: when Batsim's event asked for it
    bool deletion;       // delete the Pod named pod.name; else create pod
    PodSpec pod;
  };

  struct Job {
    std::string batsim_id;
    std::string pod;
    size_t seq = 0;     // submission order
    bool started = false;
  };

  // The run's directory (bridge_run.h).
  void prepare_dir() { dir_ = bridges::prepare_run_dir(o_.dir, "kubeconfig", "vtime-k8s", kBridgeUsage); }

  void loop() {
    for (;;) {
      std::vector<zmq::pollitem_t> items;
      items.push_back({sock_.handle(), 0, ZMQ_POLLIN, 0});
      size_t watch_item = 0;
      if (watch_) {
        watch_item = items.size();
        items.push_back({nullptr, watch_->fd(), ZMQ_POLLIN, 0});
      }
      size_t timer_item = 0;
      if (!delayed_.empty() || !client_ops_.empty()) {
        timer_item = items.size();
        items.push_back({nullptr, timer_fd_, ZMQ_POLLIN, 0});
      }
      for (int fd : cluster_->fds()) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
      try {
        zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw Fail(kBridgeProtocol, std::string("ZeroMQ: ") + e.what());
      }
      check_cluster();
      // Bindings first: what the watch holds was sent before Batsim's message (the tree was
      // idle when the broker sent it), so it belongs in this reply, whatever the wake-up order.
      if (watch_item && items[watch_item].revents) on_watch();
      if (timer_item && items[timer_item].revents) {
        uint64_t expirations = 0;
        if (read(timer_fd_, &expirations, sizeof expirations) < 0 && errno != EAGAIN) {
          throw Fail(kBridgeK8sFailed, std::string("the bridge's timer: ") + strerror(errno));
        }
        release_due();
        client_due();
      }
      if (items[0].revents & ZMQ_POLLIN) {
        zmq::message_t m;
        if (!sock_.recv(m, zmq::recv_flags::dontwait)) continue;
        if (!on_message(m.to_string())) return;
      }
    }
  }

  void check_cluster() {
    try {
      cluster_->check_alive();
    } catch (const ClusterError& e) {
      throw Fail(kBridgeK8sFailed, e.what());
    }
  }

  // Kubernetes failed us (an API call, the watch). Most often a component died, and its
  // connections closed before its exit could be reaped (a traced process is released by the
  // tracer first): give the death a moment to show (10 ms steps of virtual time, which stands
  // still while the dying process still runs), so the user learns which component it was.
  [[noreturn]] void fail_k8s(const std::string& what) {
    for (int i = 0; i < 100; ++i) {
      check_cluster();
      usleep(10000);
    }
    throw Fail(kBridgeK8sFailed, what);
  }

  // --- Batsim's side ----------------------------------------------------------------------
  // Returns false after SIMULATION_ENDS (answered, cluster stopped).
  bool on_message(const std::string& bytes) {
    auto in = parse_message(bytes, Direction::to_scheduler);
    if (!in) throw Fail(kBridgeProtocol, "invalid message from Batsim: " + in.error());
    if (o_.natural_order) {
      bridges::order_submissions(
          in->events, [](const Event& e) { return std::holds_alternative<JobSubmitted>(e.payload); },
          [](const Event& e) -> const std::string& { return std::get<JobSubmitted>(e.payload).job_id; },
          [](const Event& e) { return e.timestamp; });
    }
    Message reply;
    reply.now = in->now;
    release_due();  // a start due at this very instant goes in this reply, whichever woke first
    take_pending(reply);
    // Each event is one stimulus to Kubernetes (a Pod created or deleted), and the bridge lets
    // the whole control plane react to it (until the tree is idle, at the same virtual instant)
    // before the next: kube-scheduler's informers and its scheduling loop are goroutines that
    // would otherwise race over two events of one instant (a job ending while another is
    // submitted), and the schedule would depend on which won.
    bool ends = false;
    try {
      client_due();  // a request due at this very instant comes before this message's
      for (const Event& e : in->events) {
        if (auto* b = std::get_if<SimulationBegins>(&e.payload)) {
          start_cluster(*b);
        } else if (auto* s = std::get_if<JobSubmitted>(&e.payload)) {
          submit(*s, reply);
          bridges::settle();
        } else if (auto* c = std::get_if<JobCompleted>(&e.payload)) {
          end_job(c->job_id);
          bridges::settle();
        } else if (auto* k = std::get_if<JobKilled>(&e.payload)) {
          for (auto& id : k->job_ids) end_job(id);
          bridges::settle();
        } else if (std::holds_alternative<SimulationEnds>(e.payload)) {
          ends = true;
        }
      }
      if (!ends) client_due();  // the first of this message's requests, when the client is free
    } catch (const ApiError& e) {
      fail_k8s(e.what());
    } catch (const ClusterError& e) {
      throw Fail(kBridgeK8sFailed, e.what());
    }
    // Decisions at the virtual instant they were made: later than Batsim's message when the
    // bridge's own calls took virtual time (a latency model: --etcd-sync-latency), so that
    // Batsim's clock keeps following the tree's instead of falling behind it.
    if (origin_ns_ >= 0) {
      auto at = Nanos::from_ns(monotonic_ns() - origin_ns_);
      if (at > reply.now) reply.now = at;
    }
    for (Event& e : reply.events) e.timestamp = reply.now;
    std::string out = serialise(reply);
    sock_.send(zmq::buffer(out), zmq::send_flags::none);
    if (ends) {
      watch_.reset();
      cluster_->stop(true);
      return false;
    }
    return true;
  }

  // Decisions heard before this message, in submission order.
  void take_pending(Message& reply) {
    std::stable_sort(pending_.begin(), pending_.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [seq, e] : pending_) reply.events.push_back(std::move(e));
    pending_.clear();
  }

  void start_cluster(const SimulationBegins& b) {
    if (b.compute_resources.empty()) throw Fail(kBridgeProtocol, "the platform has no compute resource");
    cluster_->start();
    std::set<std::string> used;
    for (auto& r : b.compute_resources) {
      std::string name = KubeApi::dns_name(r.name.empty() ? "host" + std::to_string(r.id) : r.name);
      if (used.count(name)) name += "-r" + std::to_string(r.id);
      used.insert(name);
      resource_of_[name] = r.id;
      cluster_->api().create_node({name, o_.node_cpus});
    }
    cluster_->start_scheduler();
    open_watch(cluster_->api().pods_resource_version());
    // The answer (the workload's time 0) comes loop_phase before an iteration of the scheduler's
    // one-second flush, whatever the set-up took: the phase is the run's, not the start-up's. Its
    // iterations are a second and the drift apart from the scheduler's start.
    constexpr long long kSecond = 1'000'000'000LL;
    const long long period = kSecond + o_.flush_drift_ns;
    long long at = cluster_->scheduler_started_ns() - o_.loop_phase_ns;
    at += ((monotonic_ns() - at) / period + 1) * period;
    timespec ts{static_cast<time_t>(at / kSecond), static_cast<long>(at % kSecond)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    origin_ns_ = monotonic_ns();  // the workload's time 0, as this process's clock reads it
  }

  void open_watch(const std::string& rv) {
    watch_.reset();
    try {
      watch_ = std::make_unique<WatchStream>(cluster_->proxy_socket(), KubeApi::pod_watch_path(rv),
                                             std::chrono::seconds(60));
    } catch (const HttpError& e) {
      fail_k8s(std::string("cannot watch pods: ") + e.what());
    }
    last_rv_ = rv;
  }

  void submit(const JobSubmitted& s, Message& reply) {
    auto reject = [&](const std::string& why) {
      fprintf(stderr, "vtime-k8s: rejecting job %s: %s\n", s.job_id.c_str(), why.c_str());
      Event e;
      e.payload = RejectJob{s.job_id};
      reply.events.push_back(std::move(e));
    };
    if (jobs_by_batsim_.count(s.job_id)) throw Fail(kBridgeProtocol, "job " + s.job_id + " submitted twice");
    // A Pod runs on one Node, and Batsim allocates whole hosts: a job asking for several hosts
    // cannot be one Pod.
    if (s.job.res != 1) {
      reject("it asks for " + std::to_string(s.job.res) + " hosts; a Pod runs on one Node (one Batsim host)");
      return;
    }
    Job j;
    j.batsim_id = s.job_id;
    j.seq = next_seq_++;
    j.pod = "job-" + std::to_string(j.seq);
    PodSpec pod{j.pod, s.job.res, s.job_id, std::nullopt};
    if (o_.submission_priority) pod.priority = kTopPriority - static_cast<int>(j.seq % kTopPriority);
    jobs_by_batsim_[s.job_id] = j.pod;
    jobs_[j.pod] = std::move(j);
    client_request({monotonic_ns(), false, std::move(pod)});
  }

  // --- the API client's requests (BridgeOptions::client_latency_ns) ---------------------------
  // Without a latency each request is made at once (a stimulus of its own: the caller settles).
  // With one, the client makes one request at a time, each that long, as a real client waits for
  // each answer: requests wait their turn in the order a real client takes them (the one asked
  // for earlier first; a deletion before a creation asked for at the same instant), and the first
  // of a Batsim message's is made once the whole message is read (client_due).
  void client_request(ClientOp op) {
    if (o_.client_latency_ns <= 0) {
      perform(op);
      return;
    }
    auto at = std::find_if(client_ops_.begin(), client_ops_.end(), [&](const ClientOp& q) {
      return q.asked_ns > op.asked_ns || (q.asked_ns == op.asked_ns && op.deletion && !q.deletion);
    });
    client_ops_.insert(at, std::move(op));
  }

  void perform(const ClientOp& op) {
    if (op.deletion) {
      cluster_->api().delete_pod(op.pod.name);
    } else {
      cluster_->api().create_pod(op.pod);
    }
  }

  // The requests the client can make by now, each a stimulus of its own.
  void client_due() {
    if (client_ops_.empty()) return;
    const long long now = monotonic_ns();
    try {
      while (!client_ops_.empty() && client_free_ns_ <= now) {
        perform(client_ops_.front());
        client_ops_.pop_front();
        client_free_ns_ = now + o_.client_latency_ns;
        bridges::settle();
      }
    } catch (const ApiError& e) {
      fail_k8s(e.what());
    }
    arm_timer();
  }

  void end_job(const std::string& batsim_id) {
    auto it = jobs_by_batsim_.find(batsim_id);
    if (it == jobs_by_batsim_.end()) return;
    client_request({monotonic_ns(), true, PodSpec{it->second, 0, batsim_id, std::nullopt}});
    jobs_.erase(it->second);
    jobs_by_batsim_.erase(it);
  }

  // --- the scheduler's side -----------------------------------------------------------------
  void on_watch() {
    std::vector<std::string> lines;
    try {
      lines = watch_->read_available();
    } catch (const HttpError& e) {
      fail_k8s(std::string("the pod watch broke: ") + e.what());
    }
    for (auto& line : lines) {
      auto e = KubeApi::parse_pod_event(line);
      if (!e) throw Fail(kBridgeK8sFailed, "the pod watch sent something that is not an event: " + line.substr(0, 200));
      if (e->kind == PodEvent::error) throw Fail(kBridgeK8sFailed, "the pod watch ended with an error: " + e->message);
      if (!e->resource_version.empty()) last_rv_ = e->resource_version;
      if (e->kind == PodEvent::added || e->kind == PodEvent::modified) on_pod(*e);
    }
    if (watch_->ended()) open_watch(last_rv_);
  }

  void on_pod(const PodEvent& e) {
    auto it = jobs_.find(e.name);
    if (it == jobs_.end() || it->second.started || e.node.empty()) return;
    auto r = resource_of_.find(e.node);
    if (r == resource_of_.end()) {
      throw Fail(kBridgeK8sFailed, "the scheduler bound pod " + e.name + " to node '" + e.node +
                                       "', which is not one of the platform's");
    }
    it->second.started = true;
    Event ev;
    ev.payload = ExecuteJob{it->second.batsim_id, ResourceSet::from_ids({r->second}), {}};
    if (o_.job_start_latency_ns <= 0) {
      pending_.emplace_back(it->second.seq, std::move(ev));
      bridges::request_tick();
      return;
    }
    // One latency for every job: the queue stays in due order.
    delayed_.push_back({monotonic_ns() + o_.job_start_latency_ns, it->second.seq, std::move(ev)});
    arm_timer();
  }

  // --- the job-start latency (BridgeOptions::job_start_latency_ns) ---------------------------
  // Under vtime the clock is the tree's virtual one (the shim's clock_gettime and timerfd).

  void arm_timer() {
    if (timer_fd_ < 0) {
      timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
      if (timer_fd_ < 0) throw Fail(kBridgeK8sFailed, std::string("timerfd_create: ") + strerror(errno));
    }
    itimerspec at{};
    if (!delayed_.empty() || !client_ops_.empty()) {
      long long due = LLONG_MAX;
      if (!delayed_.empty()) due = delayed_.front().due_ns;
      if (!client_ops_.empty()) due = std::min(due, client_free_ns_);
      at.it_value.tv_sec = static_cast<time_t>(due / 1'000'000'000LL);
      at.it_value.tv_nsec = static_cast<long>(due % 1'000'000'000LL);
    }
    if (timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &at, nullptr) != 0) {
      throw Fail(kBridgeK8sFailed, std::string("timerfd_settime: ") + strerror(errno));
    }
  }

  // The starts due by now become decisions for the next reply (a tick asked for them).
  void release_due() {
    if (delayed_.empty()) return;
    long long now = monotonic_ns();
    bool any = false;
    while (!delayed_.empty() && delayed_.front().due_ns <= now) {
      pending_.emplace_back(delayed_.front().seq, std::move(delayed_.front().ev));
      delayed_.pop_front();
      any = true;
    }
    if (any) bridges::request_tick();
    arm_timer();
  }

  const BridgeOptions& o_;
  std::string dir_;
  zmq::context_t ctx_{1};
  zmq::socket_t sock_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<WatchStream> watch_;
  std::string last_rv_;
  std::map<std::string, int> resource_of_;             // node name -> Batsim resource id
  std::map<std::string, Job> jobs_;                    // pod name -> job
  std::map<std::string, std::string> jobs_by_batsim_;  // Batsim id -> pod name
  size_t next_seq_ = 0;
  long long origin_ns_ = -1;  // CLOCK_MONOTONIC at the answer to SIMULATION_BEGINS
  std::vector<std::pair<size_t, Event>> pending_;      // decisions for the next reply, by submission
  struct Delayed {
    long long due_ns;  // CLOCK_MONOTONIC
    size_t seq;
    Event ev;
  };
  std::deque<Delayed> delayed_;  // starts not due yet, in due order
  std::deque<ClientOp> client_ops_;  // the client's requests not made yet, in the order it takes them
  long long client_free_ns_ = 0;     // when the client can make its next request (CLOCK_MONOTONIC)
  int timer_fd_ = -1;
};

}  // namespace

int run_bridge(const BridgeOptions& o) {
  return bridges::run_reporting("vtime-k8s", o.endpoint, {kBridgeProtocol, kBridgeK8sFailed}, [&] {
    Bridge b(o);
    return b.run();
  });
}

}  // namespace vtime::k8s
