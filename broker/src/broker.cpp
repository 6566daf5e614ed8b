// The broker's conversation loop (see vtime/broker/broker.h).
//
// Order at one instant T, so runs are deterministic: the clock is set to T without waking
// anyone; Batsim's message is delivered and the scheduler handles it until its tree is idle;
// then the waiters due at or before T are woken, deadline by deadline, idle between groups; a
// tick (an empty message at T) is sent if a timer fired since the scheduler's last message;
// then Batsim gets its answer.
//
// Set-up: whatever virtual time the scheduler spends before it answers SIMULATION_BEGINS
// (daemons booting and registering, for a bridge to a real resource manager) is not simulated
// time. Batsim's time 0 starts when the answer comes: from then on the tree's clock runs ahead of
// Batsim's by that set-up time, and every conversion between the two goes through to_tp/to_nanos.
#include <vtime/broker/broker.h>

#include "call_me_later.h"
#include "job_book.h"
#include "reply_validator.h"

#include <vtime/controller.h>
#include <vtime/log.h>
#include <vtime/protocol/codec.h>
#include <vtime/session.h>
#include <vtime/spawn.h>
#include <vtime/tree_watch.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>
#include <cstring>
#include <zmq.hpp>

namespace vtime::broker {
namespace {

using protocol::Direction;
using protocol::Event;
using protocol::Message;
using protocol::Nanos;
using Clock = std::chrono::steady_clock;

// How long the broker watches for a reply before sleeping in poll (see exchange()).
constexpr std::chrono::microseconds kReplySpin{50};

// A failure that ends the run with an exit code and one line for the user.
struct Stop : std::runtime_error {
  int code;
  Stop(int c, const std::string& what) : std::runtime_error(what), code(c) {}
};


class Conversation {
 public:
  explicit Conversation(const Options& o)
      : opts_(o), session_(Session::create(session_options(o.cpu, o.epoch_ns))) {}

  int run(Summary* summary) {
    int code = kExitOk;
    try {
      start();
      loop();
    } catch (const Stop& s) {
      fprintf(stderr, "vtime broker: %s\n", s.what());
      code = s.code;
      record_safely([&](RunObserver& r) { r.error(code, s.what(), session_.now().ns()); });
    } catch (const SimulatorGone& g) {
      fprintf(stderr, "vtime broker: %s\n", g.what());
      code = g.code;
      record_safely([&](RunObserver& r) { r.error(code, g.what(), session_.now().ns()); });
    } catch (const Aborted& a) {
      code = a.code;
      aborted_ = true;
    } catch (const zmq::error_t& e) {
      fprintf(stderr, "vtime broker: ZeroMQ error: %s\n", e.what());
      code = kExitInternal;
      record_safely([&](RunObserver& r) { r.error(code, std::string("ZeroMQ error: ") + e.what(), session_.now().ns()); });
    }
    shutdown(code != kExitOk);
    if (!aborted_) {
      // After a normal end the trace stops at SIMULATION_ENDS: the scheduler's exit is recorded
      // at that instant, however long its shutdown took (see advance()).
      int64_t t = ended_at_ ? ended_at_->ns() : session_.now().ns();
      if (child_reaped_) record_safely([&](RunObserver& r) { r.root_exit(child_status_, t); });
      record_safely([&](RunObserver& r) { r.finish(code, t); });
    }
    if (summary) {
      summary_.end_time = session_.now() - setup_;
      if (ctl_) {
        summary_.advances = ctl_->stats().advances;
        summary_.handovers = ctl_->stats().handovers;
      }
      *summary = summary_;
    }
    return code;
  }

 private:
  void start() {
    if (!opts_.batsim_port) {
      batsim_ = zmq::socket_t(ctx_, zmq::socket_type::rep);
      // The answer to SIMULATION_ENDS is the last thing sent before the context goes away: with
      // no linger it could be dropped, leaving the simulator waiting for it forever.
      batsim_.set(zmq::sockopt::linger, 5000);
      batsim_.bind(opts_.batsim_endpoint);
    }
    sched_ = zmq::socket_t(ctx_, zmq::socket_type::req);
    sched_.set(zmq::sockopt::linger, 0);
    // ZeroMQ retries a connection on a real-time timer; keep that start-up wait short.
    sched_.set(zmq::sockopt::reconnect_ivl, 2);
    int events = ZMQ_EVENT_CONNECTED | (opts_.sync == SyncPolicy::kTimeout ? ZMQ_EVENT_HANDSHAKE_SUCCEEDED : 0);
    if (zmq_socket_monitor(sched_.handle(), "inproc://vtime-broker-monitor", events) != 0) {
      throw Stop(kExitInternal, "cannot monitor the scheduler socket");
    }
    monitor_ = zmq::socket_t(ctx_, zmq::socket_type::pair);
    monitor_.connect("inproc://vtime-broker-monitor");
    sched_.connect(opts_.scheduler_endpoint);
    std::vector<std::string> command;
    for (std::string a : opts_.scheduler_command) {
      for (size_t p = a.find("{endpoint}"); p != std::string::npos; p = a.find("{endpoint}", p + opts_.scheduler_endpoint.size())) {
        a.replace(p, 10, opts_.scheduler_endpoint);
      }
      command.push_back(std::move(a));
    }
    std::vector<std::pair<std::string, std::string>> env = opts_.scheduler_env;
    env.emplace_back("VTIME_SCHED_ENDPOINT", opts_.scheduler_endpoint);
    try {
      // The tree watch's helper, like the tracer, lives beside the shim.
      watch_ = TreeWatch::open_or_say(opts_.shim_path.substr(0, opts_.shim_path.rfind('/')));
    } catch (const std::exception& e) {
      throw Stop(kExitInternal, e.what());
    }
    SpawnResult r = spawn_in_session(session_, opts_.shim_path, command, env, watch_.get());
    if (!r.pid) throw Stop(r.exit_code, "scheduler: " + r.error);
    child_ = r.pid;
    ctl_.emplace(session_, child_, watch_.get());
    ctl_->set_cpu_model(opts_.cpu);
    if (opts_.observer) opts_.observer->attach(session_, child_);
  }

  // The scheduler binds its endpoint as it starts. Until our socket is connected, a message
  // would wait on ZeroMQ's real-time reconnect timer, which no idle detection can see: so the
  // first exchange waits (in real time, bounded by the start timeout) for the connection.
  void wait_connected() {
    if (connected_) return;
    auto started = Clock::now();
    auto give_up = started + std::chrono::nanoseconds(reply_limit().ns());
    while (!connected_) {
      zmq::pollitem_t items[] = {{monitor_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(5));
      if (items[0].revents & ZMQ_POLLIN) {
        read_monitor_event();
        continue;
      }
      if (child_exited()) {
        throw Stop(kExitSchedulerDied, "the scheduler " + child_status_text() + " before binding " +
                                           opts_.scheduler_endpoint);
      }
      if (Clock::now() > give_up) {
        std::string stopped = busy_or_stopped();
        throw Stop(kExitSchedulerStuck, "the scheduler did not bind " + opts_.scheduler_endpoint + " within " +
                                            reply_limit_text() +
                                            (stopped.rfind("stopped", 0) == 0 ? " (it is " + stopped + ")" : ""));
      }
      // A scheduler that waits on virtual time before it binds (a sleep, a busy-wait paying its
      // CPU-time cost) waits on us: drive its clock. Only once binding is late: a scheduler that
      // merely starts slowly, its timer threads already armed, must not see them fire before the
      // simulation begins.
      if (opts_.sync == SyncPolicy::kExact && Clock::now() > started + kLateBind) {
        unsigned looks = 0;
        auto r = ctl_->wait_idle([&] { return (++looks % 16 == 0 && monitor_pending()) || child_exited() || Clock::now() > give_up; });
        if (r == IdleResult::kIdle) {
          if (auto next = ctl_->next_deadline()) advance(*next, "decision");
        }
      }
    }
    if (opts_.sync == SyncPolicy::kTimeout) wait_handshake(give_up);
  }
  // How long the scheduler may take to bind before the broker drives its clock (wait_connected).
  static constexpr std::chrono::milliseconds kLateBind{500};

  // The real time the scheduler may stay busy in the current wait: its start-up (binding, the
  // first message and what it does after replying to it) has the start timeout when one is set,
  // every later message the crash timeout.
  bool starting() const { return summary_.scheduler_messages <= 1 && opts_.start_timeout.ns() > 0; }
  Duration reply_limit() const { return starting() ? opts_.start_timeout : opts_.crash_timeout; }
  std::string reply_limit_text() const {
    return std::to_string(reply_limit().ns() / 1000000) + " ms" + (starting() ? " (the start timeout)" : "");
  }

  // An event of our socket's monitor is waiting to be read.
  bool monitor_pending() {
    zmq::pollitem_t m[] = {{monitor_.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(m, 1, std::chrono::milliseconds(0));
    return (m[0].revents & ZMQ_POLLIN) != 0;
  }

  // One event of our socket's monitor: CONNECTED, and under the timeout policy
  // HANDSHAKE_SUCCEEDED (its first frame: the event's number, 16 bits, then a 32-bit value).
  void read_monitor_event() {
    zmq::message_t event, endpoint;
    if (!monitor_.recv(event) || !monitor_.recv(endpoint) || event.size() < sizeof(uint16_t)) return;
    uint16_t id;
    std::memcpy(&id, event.data(), sizeof id);
    if (id == ZMQ_EVENT_CONNECTED) connected_ = true;
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) connected_ = handshaken_ = true;
  }

  // The timeout policy moves the clock whenever a reply is late, from the first message on. A
  // connection is only usable once ZeroMQ's handshake is over at both ends, and the scheduler's
  // end arms a handshake timer (30 s by default) on its clock, which is virtual: a scheduler
  // slower than one budget to finish the handshake (a loaded machine) saw the clock jump to that
  // timer, dropped the connection and with it the first message, and the run hung for the crash
  // timeout. Setting up the connection is no decision of the scheduler's: the clock waits for
  // it. Our end's success comes as a monitor event; the scheduler's end is done once its tree is
  // idle with nothing of ours in flight (its I/O thread has read our last handshake command).
  // A scheduler that never idles (a busy loop) gets kHandshakeSettle, then the policy as before.
  void wait_handshake(Clock::time_point give_up) {
    // Both waits let the tree settle rather than sleep: a serialized tree (vtime-k8s) moves only
    // through wait_idle's hand-overs, its ZeroMQ I/O thread included.
    struct OwnThreads {
      Controller& c;
      explicit OwnThreads(Controller& ctl) : c(ctl) { c.watch_own_threads(true); }
      ~OwnThreads() { c.watch_own_threads(false); }
    } own(*ctl_);
    unsigned looks = 0;
    while (!handshaken_) {
      if (monitor_pending()) {
        read_monitor_event();
        continue;
      }
      if (child_exited()) {
        throw Stop(kExitSchedulerDied, "the scheduler " + child_status_text() + " during ZeroMQ's handshake on " +
                                           opts_.scheduler_endpoint);
      }
      if (Clock::now() > give_up) {
        throw Stop(kExitSchedulerStuck, "the scheduler accepted the connection to " + opts_.scheduler_endpoint +
                                            " but did not complete ZeroMQ's handshake within " + reply_limit_text() +
                                            " (is it a ZeroMQ REP socket?)");
      }
      auto r = ctl_->wait_idle([&] { return (++looks % 16 == 0 && monitor_pending()) || child_exited() || Clock::now() > give_up; });
      if (r == IdleResult::kIdle) {
        // Idle, and our end not done: the event is on its way through our own threads.
        zmq::pollitem_t m[] = {{monitor_.handle(), 0, ZMQ_POLLIN, 0}};
        zmq::poll(m, 1, std::chrono::milliseconds(1));
      }
    }
    auto until = std::min(give_up, Clock::now() + kHandshakeSettle);
    ctl_->wait_idle([&] { return child_exited() || Clock::now() > until; });
  }
  static constexpr std::chrono::seconds kHandshakeSettle{2};

  // --- recording ----------------------------------------------------------------------------
  // On the error path: a replay's comparator may throw, and nothing must escape from there.
  template <class F>
  void record_safely(F&& f) {
    if (!opts_.observer) return;
    try {
      f(*opts_.observer);
    } catch (const std::exception&) {
    }
  }

  // --- process supervision ------------------------------------------------------------------
  bool child_exited() {
    if (!child_reaped_ && child_ > 0 && waitpid(child_, &child_status_, WNOHANG) == child_) child_reaped_ = true;
    return child_reaped_;
  }
  std::string child_status_text() const {
    if (WIFEXITED(child_status_)) return "exited with status " + std::to_string(WEXITSTATUS(child_status_));
    if (WIFSIGNALED(child_status_)) {
      return std::string("was killed by signal ") + std::to_string(WTERMSIG(child_status_)) + " (" +
             strsignal(WTERMSIG(child_status_)) + ")";
    }
    return "ended";
  }
  void check_batsim_alive() {
    if (opts_.batsim_pid > 0 && kill(opts_.batsim_pid, 0) != 0) {
      throw Stop(kExitBatsimError, "the simulator (pid " + std::to_string(opts_.batsim_pid) + ") is gone");
    }
    int st;
    if (opts_.batsim_pid > 0 && waitpid(opts_.batsim_pid, &st, WNOHANG) == opts_.batsim_pid) {
      throw Stop(kExitBatsimError, "the simulator exited before the end of the simulation");
    }
  }

  void shutdown(bool failed) {
    if (child_ > 0 && !child_exited()) {
      if (!failed) {
        // After SIMULATION_ENDS the scheduler should exit by itself; give it the time it needs
        // (its own waits are virtual, so keep driving the clock), then end it.
        auto deadline = Clock::now() + std::chrono::seconds(5);
        while (!child_exited() && Clock::now() < deadline) {
          ctl_->wait_idle([&] { return child_exited() || Clock::now() > deadline; });
          if (child_exited()) break;
          auto next = ctl_->next_deadline();
          if (!next) break;
          advance(*next, "end");
        }
      }
      if (!child_exited()) {
        for (pid_t p : ctl_->tree_pids()) kill(p, SIGKILL);
        waitpid(child_, &child_status_, 0);
        child_reaped_ = true;
      }
    }
    if (ctl_) {
      for (pid_t p : ctl_->tree_pids()) {
        if (p != child_) kill(p, SIGKILL);
      }
    }
  }

  // --- the Batsim side ----------------------------------------------------------------------
  std::optional<std::string> recv_batsim() {
    if (opts_.batsim_port) return opts_.batsim_port->recv();
    for (;;) {
      zmq::pollitem_t items[] = {{batsim_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(100));
      if (items[0].revents & ZMQ_POLLIN) {
        zmq::message_t m;
        if (!batsim_.recv(m)) continue;
        return m.to_string();
      }
      check_batsim_alive();
      if (child_exited()) {
        throw Stop(kExitSchedulerDied, "the scheduler " + child_status_text() + " before the end of the simulation");
      }
    }
  }

  // --- the scheduler side -------------------------------------------------------------------
  bool reply_ready() { return (sched_.get(zmq::sockopt::events) & ZMQ_POLLIN) != 0; }

  // Sends one message to the scheduler and returns its parsed, validated reply. Unless
  // `last` (the reply to SIMULATION_ENDS, after which the scheduler may exit), waits until the
  // scheduler's tree is idle again: what it does after replying (arming its next timer, say)
  // belongs to this instant, and the next deadline is read only then.
  Message exchange(const std::string& bytes, Nanos now, bool last = false) {
    wait_connected();
    if (opts_.observer) opts_.observer->message(MsgDir::kToScheduler, bytes, now.ns());
    sched_.send(zmq::buffer(bytes), zmq::send_flags::none);
    ++summary_.scheduler_messages;
    fired_since_message_ = false;
    ticks_seen_ = tick_requests();
    if (opts_.wall_factor > 0) ctl_->set_rate(opts_.wall_factor);
    auto started = Clock::now();
    auto crash_at = started + std::chrono::nanoseconds(reply_limit().ns());
    // Most replies come within a fraction of a millisecond: wait for one on the socket first,
    // which costs no CPU, rather than scanning the scheduler's threads in /proc while it works.
    // Only the real time spent here depends on this; what happens next is decided as always
    // (a reply ends the wait, else idleness is detected exactly).
    bool replied = false;
    if (opts_.sync == SyncPolicy::kExact && opts_.wall_factor == 0) {
      // A tick's reply takes a few tens of microseconds: watching for it while giving the cpu
      // to whoever wants it answers sooner than sleeping in poll and being woken by our I/O
      // thread (a halted vcpu woken costs tens of microseconds on this kind of VM: kit_10h_80
      // with periodic_fcfs went from 3.6 s to 2.25 s, the event-based twin's time).
      auto spin_until = Clock::now() + kReplySpin;
      while (!(replied = reply_ready()) && Clock::now() < spin_until) sched_yield();
      if (!replied) {
        zmq::pollitem_t items[] = {{sched_.handle(), 0, ZMQ_POLLIN, 0}};
        zmq::poll(items, 1, std::chrono::milliseconds(2));
        replied = (items[0].revents & ZMQ_POLLIN) != 0;
      }
    }
    for (;;) {
      if (replied || reply_ready()) break;
      if (opts_.sync == SyncPolicy::kTimeout) {
        if (wait_timeout_policy(crash_at, now)) break;
        continue;
      }
      // Our own ZeroMQ I/O threads may still carry the request: while they work, the scheduler's
      // tree can look idle without having seen it. Only this wait needs them: once the reply is
      // here (REQ/REP), nothing of ours is in flight, so the other decisions skip them.
      ctl_->watch_own_threads(true);
      ctl_->wait_idle([&] { return reply_ready() || child_exited() || Clock::now() > crash_at; });
      ctl_->watch_own_threads(false);
      if (reply_ready()) break;
      if (child_exited()) {
        // A scheduler may reply and exit at once (to SIMULATION_ENDS): its reply can still be
        // on its way through our own I/O thread. The wait ends as soon as it is here; its bound
        // only delays the report of a scheduler that died without replying. 500 ms was once too
        // short under TSan on a loaded 2-cpu machine (equivalence.repeat20.batch_window.burst).
        zmq::pollitem_t items[] = {{sched_.handle(), 0, ZMQ_POLLIN, 0}};
        zmq::poll(items, 1, std::chrono::milliseconds(2000));
        if (reply_ready()) break;
        throw Stop(kExitSchedulerDied, "the scheduler " + child_status_text() + " while handling the message at " +
                                           protocol::format_seconds(now));
      }
      if (Clock::now() > crash_at) {
        throw Stop(kExitSchedulerHung, "the scheduler has been " + busy_or_stopped() + " for " + reply_limit_text() +
                                           " of real time without replying to the message at " +
                                           protocol::format_seconds(now));
      }
      // Idle without a reply: the scheduler waits on its own timer before answering (decision
      // time in virtual time), or on nothing at all.
      auto next = ctl_->next_deadline();
      if (!next) throw Stop(kExitSchedulerStuck, stuck_reason() + " without replying to the message at " +
                                                     protocol::format_seconds(now) + describe_tree());
      advance(*next, "decision");
    }
    if (opts_.wall_factor > 0) ctl_->set_rate(0);
    zmq::message_t m;
    if (!sched_.recv(m)) throw Stop(kExitInternal, "lost the scheduler's reply");
    std::string text = m.to_string();
    uint64_t reply_seq = opts_.observer ? opts_.observer->message(MsgDir::kFromScheduler, text, now.ns()) : 0;
    auto parsed = protocol::parse_message(text, Direction::to_batsim);
    if (!parsed) {
      throw Stop(kExitBadReply, "invalid reply from the scheduler to the message at " + protocol::format_seconds(now) +
                                    ": " + parsed.error() + " (reply: " + text.substr(0, 200) + ")");
    }
    if (auto err = validate_reply(*parsed, now, jobs_)) {
      throw Stop(kExitBadReply, "invalid reply from the scheduler to the message at " + protocol::format_seconds(now) +
                                    ": " + *err);
    }
    if (opts_.observer) opts_.observer->decisions(reply_seq, *parsed, now.ns());
    if (!last) settle();
    return *parsed;
  }

  // Timeout policy (Batkube's): wait a real-time budget instead of detecting idleness; returns
  // true once a reply is ready. Time moves in timesteps while nothing is pending.
  bool wait_timeout_policy(Clock::time_point crash_at, Nanos msg_time) {
    auto budget = std::chrono::nanoseconds(std::max(opts_.timeout.ns(), opts_.min_delay.ns()));
    spend_budget(Clock::now() + budget + std::chrono::milliseconds(1), true);
    if (reply_ready()) return true;
    if (child_exited()) throw Stop(kExitSchedulerDied, "the scheduler " + child_status_text());
    if (Clock::now() > crash_at) {
      // Say what the tree was doing, as the exact policy does: a hang under this policy is a
      // bug or a scheduler's own, and the run's log is all that is left of it.
      throw Stop(kExitSchedulerHung, "the scheduler did not reply to the message at " + protocol::format_seconds(msg_time) +
                                         " within " + reply_limit_text() +
                                         " of real time (timeout policy, virtual time now " +
                                         protocol::format_seconds(to_nanos(session_.now())) + ")" + describe_tree());
    }
    // The budget is spent and no reply came: move time on by one step (or to the next deadline).
    auto next = ctl_->next_deadline();
    TimePoint now = session_.now();
    TimePoint target = now + step_;
    if (next && (*next < target || opts_.fast_forward_when_idle)) target = *next;
    step_ = Duration::nanoseconds(std::min<int64_t>(opts_.max_timestep.ns(),
                                                    static_cast<int64_t>(step_.ns() * opts_.backoff_factor)));
    advance(target, "timestep");
    return false;
  }

  // The timeout policy's real-time budget, until `end` (or a reply, if `until_reply`). A tree
  // that asked to be serialized (vtime_serialize: vtime-k8s by default) moves only through the
  // hand-overs made at its idle points, so the budget is spent letting it settle, as exact mode
  // does; once it is idle the rest is waited out. Without that the first message never got past
  // vtime-k8s's held ZeroMQ thread (every run `busy`).
  void spend_budget(Clock::time_point end, bool until_reply) {
    if (session_.header().serial.load(std::memory_order_acquire) != 0) {
      unsigned looks = 0;
      ctl_->wait_idle([&] {
        return Clock::now() >= end || (until_reply && reply_ready()) || (++looks % 16 == 0 && child_exited());
      });
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(end - Clock::now());
    if (left.count() <= 0) return;
    if (until_reply) {
      zmq::pollitem_t items[] = {{sched_.handle(), 0, ZMQ_POLLIN, 0}};
      if (!reply_ready()) zmq::poll(items, 1, left);
    } else {
      std::this_thread::sleep_until(end);
    }
  }

  // Exact mode moves to a deadline one process at a time (Controller::advance_step; the caller
  // settles in between), so that processes due at one instant never race; a timestep of the
  // timeout policy wakes everything due by its end at once.
  //
  // The shutdown after SIMULATION_ENDS is not recorded: there the scheduler ends its processes with
  // signals, and when the kernel has torn one down (its sockets closed, its exit seen) against the
  // others' timers is real time, so two runs of one recording differed only in their tails.
  void advance(TimePoint t, const char* reason) {
    TimePoint from = session_.now();
    RunObserver* obs = ended_at_ ? nullptr : opts_.observer;
    if (obs) obs->before_advance(from.ns(), t.ns());
    int woken = opts_.sync == SyncPolicy::kExact ? ctl_->advance_step(t) : ctl_->advance_to(t);
    if (woken > 0) fired_since_message_ = true;
    if (obs) obs->advance(from.ns(), std::max(from, t).ns(), reason, woken);
  }

  // Lets the scheduler's tree settle (exact: idle; timeout: the real-time budget).
  void settle() {
    if (opts_.sync == SyncPolicy::kTimeout) {
      auto budget = std::chrono::nanoseconds(std::max(opts_.timeout.ns(), opts_.min_delay.ns()));
      spend_budget(Clock::now() + budget, false);
      if (opts_.observer) opts_.observer->observe(session_.now().ns());
      // No idle decision reclaims dead processes' slots here: do it every 20 ms of real time.
      if (Clock::now() >= next_reclaim_) {
        ctl_->reclaim_dead();
        next_reclaim_ = Clock::now() + std::chrono::milliseconds(20);
      }
      return;
    }
    auto crash_at = Clock::now() + std::chrono::nanoseconds(reply_limit().ns());
    // A scheduler that dies leaves no running thread, so the wait ends as an idle tree and the
    // check below reports it: asking the kernel about the child on every look (a wait4 each)
    // only costs time; every 16th look is enough for a tree whose other processes stay busy.
    unsigned looks = 0;
    ctl_->wait_idle([&] { return (++looks % 16 == 0 && child_exited()) || Clock::now() > crash_at; });
    if (child_exited()) throw Stop(kExitSchedulerDied, "the scheduler " + child_status_text());
    if (Clock::now() > crash_at) throw Stop(kExitSchedulerHung, "the scheduler stayed " + busy_or_stopped() + " for " + reply_limit_text() +
                                                                " of real time after replying");
    if (opts_.observer) opts_.observer->observe(session_.now().ns());
  }

  // Why a scheduler that never became idle did not answer: a stopped process (SIGSTOP, a
  // debugger: the kernel count sees it neither running nor waiting) or computation.
  std::string busy_or_stopped() {
    for (auto& t : ctl_->describe()) {
      if (t.state == 'T') {
        return "stopped (process " + std::to_string(t.pid) + ", " + t.comm +
               ", is in state T: SIGSTOP or a debugger; SIGCONT resumes it)";
      }
    }
    return "busy (a busy loop?)";
  }

  // "blocked forever", or, when a thread waits with a real timeout vtime does not control, what
  // keeps the clock from moving (docs/tracer.md).
  std::string stuck_reason() {
    for (auto& t : ctl_->describe()) {
      if (!t.real_timeout.empty()) {
        return "virtual time cannot move: pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " (" +
               t.comm + ") waits in " + t.real_timeout +
               ", which vtime does not control (docs/tracer.md lists such calls), so the scheduler is stuck";
      }
    }
    return "the scheduler is blocked forever";
  }

  std::string describe_tree() {
    std::string out = "; its threads:";
    for (auto& t : ctl_->describe()) out += "\n  " + to_string(t);
    return out;
  }

  // Fires the scheduler's timers due at or before T, deadline by deadline, and hands their
  // decisions over with ticks.
  void fire_due_timers(Nanos T, std::vector<Event>& decisions) {
    for (int rounds = 0; rounds < 100000; ++rounds) {
      auto next = ctl_->next_deadline();
      if (next && *next <= to_tp(T)) {
        advance(*next, "timer");
        settle();
        continue;
      }
      bool timers_tick = fired_since_message_ &&
                         session_.header().ticks_on_request_only.load(std::memory_order_acquire) == 0;
      if (!timers_tick && tick_requests() == ticks_seen_) return;
      Message tick;
      tick.now = T;
      ++summary_.ticks;
      Message reply = exchange(protocol::serialise(tick), T);
      collect(reply, decisions);
    }
    throw Stop(kExitSchedulerHung, "the scheduler's timers keep firing at " + protocol::format_seconds(T) +
                                       " without time moving (a zero-period timer?)");
  }

  void collect(const Message& reply, std::vector<Event>& decisions) {
    if (reply.now > reply_now_) reply_now_ = reply.now;
    for (const Event& e : reply.events) {
      if (auto* c = std::get_if<protocol::CallMeLater>(&e.payload)) cml_.add(c->target, CallOwner::kScheduler);
      jobs_.on_decision(e);
      decisions.push_back(e);
    }
  }

  void loop() {
    BatsimPort* typed = opts_.batsim_port && opts_.batsim_port->speaks_messages() ? opts_.batsim_port : nullptr;
    const bool debug = log_enabled("broker", LogLevel::kDebug);
    for (;;) {
      // From a typed port, text only where it is needed (see BatsimPort).
      std::string bytes;
      protocol::Result<Message> parsed = protocol::Error{};
      if (typed) {
        parsed = typed->recv_message();
        if (opts_.observer || debug) bytes = protocol::serialise(*parsed);
      } else {
        bytes = *recv_batsim();
        parsed = protocol::parse_message(bytes, Direction::to_scheduler);
      }
      ++summary_.batsim_messages;
      VTIME_LOGF("broker", LogLevel::kDebug, "batsim -> %s", bytes.substr(0, 300).c_str());
      if (opts_.observer) {
        Nanos at = to_nanos(session_.now());
        opts_.observer->message(MsgDir::kFromBatsim, bytes, parsed ? std::max(parsed->now, at).ns() : at.ns());
      }
      if (!parsed) throw Stop(kExitBatsimError, "invalid message from the simulator: " + parsed.error());
      Message msg = std::move(*parsed);
      Nanos T = msg.now;
      if (opts_.max_sim_time > Duration::zero() && T > Nanos::from_ns(opts_.max_sim_time.ns()))
        throw Stop(kExitSimTimeLimit, "the simulation passed --max-sim-time (" + protocol::format_seconds(T) +
                                          " s) with " + std::to_string(jobs_.submitted() - jobs_.done()) +
                                          " job(s) not finished: the scheduler never ends it");
      bool begins = false;
      TimePoint before = session_.now();
      ctl_->set_now(to_tp(T));
      if (opts_.observer && to_tp(T) > before) opts_.observer->advance(before.ns(), to_tp(T).ns(), "message", 0);
      reply_now_ = T;
      step_ = opts_.base_timestep;

      bool ends = false;
      Message for_sched;
      for_sched.now = msg.now;
      for_sched.extras = msg.extras;
      bool filtered = false;
      for (Event& e : msg.events) {
        jobs_.on_batsim_event(e);
        if (std::holds_alternative<protocol::SimulationEnds>(e.payload)) ends = true;
        if (std::holds_alternative<protocol::SimulationBegins>(e.payload)) begins = true;
        if (std::holds_alternative<protocol::RequestedCall>(e.payload)) {
          auto owner = cml_.pop();
          if (owner && *owner == CallOwner::kBroker) {
            filtered = true;  // ours: the scheduler never asked for it
            continue;
          }
        }
        for_sched.events.push_back(std::move(e));
      }

      std::vector<Event> decisions;
      if (!for_sched.events.empty()) {
        // Forward Batsim's own bytes when nothing was taken out (a typed port's message, the
        // same events, written as its text would have been).
        Message reply = exchange(filtered || typed ? protocol::serialise(for_sched) : bytes, T, ends);
        collect(reply, decisions);
        if (begins && session_.now() > to_tp(T)) {
          setup_ = setup_ + (session_.now() - to_tp(T));
          VTIME_LOGF("broker", LogLevel::kInfo, "set-up took %lld ns of virtual time",
                     static_cast<long long>(setup_.ns()));
        }
      }
      if (!ends) fire_due_timers(T, decisions);

      Message answer;
      answer.now = reply_now_;
      answer.events = std::move(decisions);
      if (!ends) maybe_call_me_later(answer);
      std::string out;
      if (!typed || opts_.observer || debug) out = protocol::serialise(answer);
      VTIME_LOGF("broker", LogLevel::kDebug, "batsim <- %s", out.substr(0, 300).c_str());
      if (opts_.observer) opts_.observer->message(MsgDir::kToBatsim, out, answer.now.ns());
      const Nanos answered_at = answer.now;
      if (typed) {
        typed->send_message(std::move(answer));
      } else if (opts_.batsim_port) {
        opts_.batsim_port->send(out);
      } else {
        batsim_.send(zmq::buffer(out), zmq::send_flags::none);
      }
      if (opts_.progress) {
        opts_.progress("simulated " + protocol::format_seconds(answered_at) + " s, jobs " + std::to_string(jobs_.done()) +
                       "/" + std::to_string(jobs_.submitted()));
      }
      if (ends) {
        ended_at_ = session_.now();
        return;
      }
    }
  }

  // One CALL_ME_LATER for the scheduler's earliest pending deadline, unless Batsim will call us
  // by then anyway, or every job is done (then timers must not keep the simulation alive).
  void maybe_call_me_later(Message& answer) {
    if (opts_.stop_timers_when_done && jobs_.all_done()) return;
    auto next = ctl_->next_deadline();
    if (opts_.sync == SyncPolicy::kTimeout) {
      // Without idle detection the scheduler may still be working on its last step (its next
      // deadline not armed yet): like Batkube, come back after one timestep at the latest.
      TimePoint step_end = to_tp(answer.now) + opts_.base_timestep;
      if (!next || *next > step_end) next = step_end;
    }
    if (!next) return;
    Nanos target = to_nanos(*next);
    Nanos floor = answer.now + Nanos::from_ns(std::max<int64_t>(1, opts_.cml_lead.ns()));
    if (target < floor) target = floor;
    if (cml_.has_at_or_before(target)) return;
    Event e;
    e.timestamp = answer.now;
    e.payload = protocol::CallMeLater{target};
    answer.events.push_back(std::move(e));
    cml_.add(target, CallOwner::kBroker);
    ++summary_.timer_call_me_laters;
  }

  TimePoint to_tp(Nanos n) const { return TimePoint::from_ns(n.ns()) + setup_; }
  Clock::time_point next_reclaim_{};  // timeout policy: when to free dead processes' slots next
  Nanos to_nanos(TimePoint t) const { return Nanos::from_ns((t - setup_).ns()); }
  uint32_t tick_requests() const { return session_.header().tick_requests.load(std::memory_order_acquire); }

  const Options& opts_;
  Session session_;
  Duration setup_;          // virtual time the scheduler spent answering SIMULATION_BEGINS
  uint32_t ticks_seen_ = 0; // tick requests counted when the scheduler was last sent a message
  std::unique_ptr<TreeWatch> watch_;  // before ctl_, which points to it
  std::optional<Controller> ctl_;
  zmq::context_t ctx_{1};
  zmq::socket_t batsim_;
  zmq::socket_t sched_;
  zmq::socket_t monitor_;
  bool connected_ = false;
  bool handshaken_ = false;  // timeout policy: our end of ZeroMQ's handshake is done
  pid_t child_ = 0;
  int child_status_ = 0;
  bool child_reaped_ = false;
  bool fired_since_message_ = false;
  bool aborted_ = false;
  std::optional<TimePoint> ended_at_;  // the tree's time when SIMULATION_ENDS was answered
  Nanos reply_now_;
  Duration step_;
  CallMeLaterBook cml_;
  JobBook jobs_;
  Summary summary_;
};

}  // namespace

int run(const Options& opts, Summary* summary) {
  if (opts.scheduler_command.empty()) {
    fprintf(stderr, "vtime broker: no scheduler command\n");
    return kExitInternal;
  }
  try {
    Conversation c(opts);
    return c.run(summary);
  } catch (const SessionError& e) {
    fprintf(stderr, "vtime broker: %s\n", e.what());
    return kExitInternal;
  }
}

}  // namespace vtime::broker
