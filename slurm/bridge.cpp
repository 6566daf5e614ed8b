// vtime-slurm's conversation loop (see bridge.h).
#include "bridge.h"

#include "agent_link.h"
#include "daemon_set.h"
#include "job_order.h"
#include "loopback_ports.h"
#include "bridge_run.h"
#include "vtime_hooks.h"
#include "slurm_client.h"
#include "slurm_conf.h"

#include <vtime/protocol/codec.h>

#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <zmq.hpp>

extern char** environ;

namespace vtime::slurm {
namespace {

namespace fs = std::filesystem;
using namespace vtime::protocol;
using bridges::DaemonError;
using bridges::DaemonSet;
using bridges::request_tick;

// Ends the run with an exit code and one message for the user (bridge_run.h).
using Fail = bridges::BridgeFailure;

std::string safe_name(const std::string& id) {
  std::string out = id;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '!' && c != '.' && c != '_' && c != '-') c = '_';
  }
  return out.substr(0, 100);
}

std::string user_name() {
  if (passwd* pw = getpwuid(getuid())) return pw->pw_name;
  return "root";
}

class Bridge {
 public:
  explicit Bridge(const BridgeOptions& o) : o_(o) {
    if (!o.extra_path.empty()) {
      std::ifstream in(o.extra_path);
      if (!in) throw Fail(kBridgeUsage, "cannot read --slurm-conf " + o.extra_path + ": " + strerror(errno));
      std::stringstream ss;
      ss << in.rdbuf();
      auto e = parse_extra(ss.str(), o.extra_path);
      if (!e) throw Fail(kBridgeUsage, e.error());
      extra_ = std::move(*e);
    }
    prepare_dir();
    agent_name_ = "vtime-slurm-" + std::to_string(getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(this));
    agents_ = std::make_unique<AgentLink>(agent_name_);
    sock_ = zmq::socket_t(ctx_, zmq::socket_type::rep);
    sock_.set(zmq::sockopt::linger, 1000);
    sock_.bind(o.endpoint);
    // Every decision of ours is heard from a job agent, which asks for a tick: the timers of
    // Slurm's daemons (ten a virtual second) have nothing to tell Batsim by themselves.
    bridges::ticks_on_request();
  }

  int run() {
    try {
      loop();
      return kBridgeOk;
    } catch (const Fail& f) {
      fprintf(stderr, "vtime-slurm: %s\n", f.what());
      stop_cluster(false);
      return f.code;
    }
  }

 private:
  // The run's directory (bridge_run.h), with Slurm's state, log and spool directories.
  void prepare_dir() {
    dir_ = bridges::prepare_run_dir(o_.dir, "slurm.conf", "vtime-slurm", kBridgeUsage);
    std::error_code ec;
    for (const char* sub : {"state", "log", "spool"}) fs::create_directories(fs::path(dir_) / sub, ec);
    if (ec) throw Fail(kBridgeUsage, "cannot create " + dir_ + "/...: " + ec.message());
  }


  void loop() {
    for (;;) {
      std::vector<zmq::pollitem_t> items;
      items.push_back({sock_.handle(), 0, ZMQ_POLLIN, 0});
      items.push_back({nullptr, agents_->listen_fd(), ZMQ_POLLIN, 0});
      for (int fd : daemons_.fds()) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
      size_t first_agent = items.size();
      for (int fd : agents_->agent_fds()) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
      try {
        zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw Fail(kBridgeProtocol, std::string("ZeroMQ: ") + e.what());
      }
      if (auto dead = daemons_.reap()) throw Fail(kBridgeSlurmFailed, *dead);
      if (items[1].revents & ZMQ_POLLIN) agents_->accept_all();
      for (size_t i = first_agent; i < items.size(); ++i) {
        if (items[i].revents) on_agent(items[i].fd);
      }
      if (items[0].revents & ZMQ_POLLIN) {
        zmq::message_t m;
        if (!sock_.recv(m, zmq::recv_flags::dontwait)) continue;
        if (!on_message(m.to_string())) return;
      }
    }
  }

  // --- Batsim's side ----------------------------------------------------------------------
  // Returns false after SIMULATION_ENDS (answered, cluster stopped).
  bool on_message(const std::string& bytes) {
    auto in = parse_message(bytes, Direction::to_scheduler);
    if (!in) throw Fail(kBridgeProtocol, "invalid message from Batsim: " + in.error());
    // What agents said before this message (the tree was idle when it was sent, so that set does
    // not depend on timing) goes into this reply; what they say while it is handled waits for
    // the next message (a tick the bridge asks for).
    Message reply;
    reply.now = in->now;
    for (auto& [id, e] : pending_) {
      e.timestamp = in->now;
      reply.events.push_back(std::move(e));
    }
    pending_.clear();
    bool ends = false;
    if (o_.natural_order) order_submissions(in->events);
    for (const Event& e : in->events) {
      if (auto* b = std::get_if<SimulationBegins>(&e.payload)) {
        start_cluster(*b);
      } else if (auto* s = std::get_if<JobSubmitted>(&e.payload)) {
        submit(*s, reply);
      } else if (auto* c = std::get_if<JobCompleted>(&e.payload)) {
        int code = c->job_state == JobState::completed_successfully ? 0 : (c->return_code & 255 ? c->return_code & 255 : 1);
        end_job(c->job_id, code);
      } else if (auto* k = std::get_if<JobKilled>(&e.payload)) {
        for (auto& id : k->job_ids) end_job(id, 143);
      } else if (std::holds_alternative<SimulationEnds>(e.payload)) {
        ends = true;
      }
    }
    for (Event& e : reply.events) e.timestamp = in->now;
    std::string out = serialise(reply);
    sock_.send(zmq::buffer(out), zmq::send_flags::none);
    if (ends) {
      stop_cluster(true);
      return false;
    }
    return true;
  }

  // Jobs submitted at one instant, in the order a person replaying the trace would submit them
  // (bridges/job_order.h); other events keep their places.
  static void order_submissions(std::vector<Event>& ev) {
    bridges::order_submissions(
        ev, [](const Event& e) { return std::holds_alternative<JobSubmitted>(e.payload); },
        [](const Event& e) -> const std::string& { return std::get<JobSubmitted>(e.payload).job_id; },
        [](const Event& e) { return e.timestamp; });
  }

  void submit(const JobSubmitted& s, Message& reply) {
    JobRequest r;
    r.name = safe_name(s.job_id);
    r.comment = s.job_id;
    r.nodes = static_cast<uint32_t>(std::max(s.job.res, 0));
    r.time_limit_min = s.job.walltime ? time_limit_minutes(s.job.walltime->ns()) : 0;
    r.script = "#!" + o_.self + " --job-agent\n";
    r.work_dir = dir_;
    for (char** e = environ; *e; ++e) r.environment.emplace_back(*e);
    r.environment.push_back(std::string(kAgentSocketEnv) + "=" + agent_name_);
    r.environment.push_back(std::string(kAgentStartLatencyEnv) + "=" + std::to_string(o_.job_start_latency_ns));
    auto id = s.job.res > 0 ? client_->submit(r) : protocol::Result<uint32_t>(Error{"a job needs at least one resource"});
    if (id) {
      batsim_of_[*id] = s.job_id;
      slurm_of_[s.job_id] = *id;
      return;
    }
    // Slurm refusing a job (too large, a bad limit) is Batsim's REJECT_JOB; Slurm not answering
    // at all is a failure of the cluster.
    if (auto dead = daemons_.reap()) throw Fail(kBridgeSlurmFailed, *dead);
    if (!client_->ping()) throw Fail(kBridgeSlurmFailed, "slurmctld does not answer (submitting " + s.job_id + ": " + id.error() + ")");
    fprintf(stderr, "vtime-slurm: Slurm refused job %s (%d nodes): %s; rejecting it\n", s.job_id.c_str(), s.job.res,
            id.error().c_str());
    Event e;
    e.payload = RejectJob{s.job_id};
    reply.events.push_back(std::move(e));
  }

  void end_job(const std::string& batsim_id, int code) {
    auto it = slurm_of_.find(batsim_id);
    if (it == slurm_of_.end()) return;
    if (!agents_->end(it->second, code)) {
      fprintf(stderr, "vtime-slurm: job %s (Slurm job %u) has no agent to end\n", batsim_id.c_str(), it->second);
    }
    batsim_of_.erase(it->second);
    slurm_of_.erase(it);
  }

  // --- the agents' side ---------------------------------------------------------------------
  void on_agent(int fd) {
    for (const AgentReport& r : agents_->read(fd)) {
      auto it = batsim_of_.find(r.slurm_id);
      if (r.kind == AgentReport::kBroken || it == batsim_of_.end()) {
        fprintf(stderr, "vtime-slurm: ignoring a job agent: %s\n",
                r.kind == AgentReport::kBroken ? r.text.c_str() : ("unknown Slurm job " + std::to_string(r.slurm_id)).c_str());
        continue;
      }
      Event e;
      if (r.kind == AgentReport::kStarted) {
        std::vector<int> ids;
        for (auto& n : SlurmClient::expand_hostlist(r.nodelist)) {
          auto rid = resource_of_node(n);
          if (!rid) throw Fail(kBridgeSlurmFailed, "Slurm started job " + std::to_string(r.slurm_id) + " on node '" + n +
                                                       "', which is not one of the platform's");
          ids.push_back(*rid);
        }
        e.payload = ExecuteJob{it->second, ResourceSet::from_ids(ids), {}};
      } else {
        // Slurm ended the job itself (its time limit, or an administrator): Batsim must hear it.
        e.payload = KillJob{{it->second}};
      }
      pending_.emplace_back(r.slurm_id, std::move(e));
      std::stable_sort(pending_.begin(), pending_.end(), [](auto& a, auto& b) { return a.first < b.first; });
      request_tick();
    }
  }

  // --- the cluster --------------------------------------------------------------------------
  void start_cluster(const SimulationBegins& b) {
    ClusterSpec c;
    c.dir = dir_;
    for (auto& r : b.compute_resources) c.resource_ids.push_back(r.id);
    if (c.resource_ids.empty()) throw Fail(kBridgeProtocol, "the platform has no compute resource");
    try {
      ports_.emplace(static_cast<int>(c.resource_ids.size()) + 1);
      c.base_port = ports_->base();
    } catch (const std::runtime_error& e) {
      throw Fail(kBridgeSlurmFailed, e.what());
    }
    c.user = user_name();
    std::string conf = dir_ + "/slurm.conf";
    {
      std::ofstream out(conf);
      out << make_slurm_conf(c, extra_);
      if (!out) throw Fail(kBridgeUsage, "cannot write " + conf);
    }
    setenv("SLURM_CONF", conf.c_str(), 1);
    std::error_code ec;
    for (int id : c.resource_ids) fs::create_directories(dir_ + "/spool/" + node_name(id), ec);
    const long long started_s = virtual_now_ns() / 1'000'000'000;
    try {
      daemons_.start({"slurmctld", {"slurmctld", "-D", "-c", "-f", conf}, dir_ + "/log/slurmctld.log",
                      dir_ + "/log/slurmctld.out", std::nullopt, ""});
      client_ = std::make_unique<SlurmClient>(conf);
      wait_until("slurmctld to answer", [&] { return client_->ping(); });
      for (int id : c.resource_ids) {
        std::string n = node_name(id);
        daemons_.start({"slurmd " + n, {"slurmd", "-D", "-N", n, "-f", conf}, dir_ + "/log/slurmd-" + n + ".log",
                        dir_ + "/log/slurmd-" + n + ".out", std::nullopt, ""});
      }
    } catch (const DaemonError& e) {
      throw Fail(kBridgeSlurmFailed, e.what());
    }
    int want = static_cast<int>(c.resource_ids.size());
    wait_until("every node to be idle", [&] { return client_->idle_nodes() == want; });
    settle(started_s);
  }

  // Lets the cluster run on (virtual time) until settle_s whole seconds after slurmctld's start,
  // less kPassPhaseNs: the answer to SIMULATION_BEGINS, Batsim's time 0, comes then
  // (BridgeOptions::settle_s). A cluster slower to come up than that waits for the next such
  // instant, a whole second later, so the phase holds whatever the start-up took.
  void settle(long long started_s) const {
    long long target = (started_s + o_.settle_s) * 1'000'000'000 - kPassPhaseNs;
    long long now = virtual_now_ns();
    while (target <= now) target += 1'000'000'000;
    timespec d{static_cast<time_t>((target - now) / 1'000'000'000), static_cast<long>((target - now) % 1'000'000'000)};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
  }

  static long long virtual_now_ns() {
    timespec t{};
    clock_gettime(CLOCK_REALTIME, &t);  // the tree's virtual clock (the shim)
    return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  }

  // Waits (in this process's virtual time) until `ready` holds; a daemon dying or the start-up
  // timeout passing fails the run.
  template <class F>
  void wait_until(const char* what, F ready) {
    try {
      daemons_.wait_until(what, std::chrono::seconds(o_.start_timeout_s), "see the logs in " + dir_ + "/log", ready);
    } catch (const DaemonError& e) {
      throw Fail(kBridgeSlurmFailed, e.what());
    }
  }

  void stop_cluster(bool orderly) {
    if (daemons_.size() == 0) return;
    if (orderly && client_ && daemons_.running("slurmctld")) {
      daemons_.expect_exit();
      client_->shutdown();
    }
    auto signalled = daemons_.stop_all(std::chrono::milliseconds(orderly ? 30000 : 0));
    if (orderly && !signalled.empty()) {
      std::string names;
      for (auto& n : signalled) names += (names.empty() ? "" : ", ") + n;
      fprintf(stderr, "vtime-slurm: had to signal %s at shutdown\n", names.c_str());
    }
  }

  const BridgeOptions& o_;
  Extra extra_;
  std::string dir_;
  std::optional<bridges::LoopbackPorts> ports_;  // the daemons' ports, reserved for the run
  std::string agent_name_;
  zmq::context_t ctx_{1};
  zmq::socket_t sock_;
  DaemonSet daemons_;
  std::unique_ptr<SlurmClient> client_;
  std::unique_ptr<AgentLink> agents_;
  std::map<uint32_t, std::string> batsim_of_;  // Slurm job id -> Batsim job id
  std::map<std::string, uint32_t> slurm_of_;
  std::vector<std::pair<uint32_t, Event>> pending_;  // decisions for the next reply, by Slurm job id
};

}  // namespace

int run_bridge(const BridgeOptions& o) {
  return bridges::run_reporting("vtime-slurm", o.endpoint, {kBridgeProtocol, kBridgeSlurmFailed}, [&] {
    Bridge b(o);
    return b.run();
  });
}

}  // namespace vtime::slurm
