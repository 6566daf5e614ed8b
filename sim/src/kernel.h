// A miniature of SimGrid 3.32's maestro, as Batsim 4.2.1 uses it: actors (C++ coroutines) that
// sleep, create actors, kill actors and exchange messages through mailboxes, scheduled exactly as
// SimGrid schedules them, so that the embedded simulator orders and times Batsim's internal
// messages as real Batsim does.
//
// What is reproduced (docs/sim.md, "Simulation model"):
// - Sub-rounds: every actor ready to run runs until its next simcall, in the ready list's order;
//   then the simcalls of that sub-round are handled in the same order (answering an actor puts it
//   at the end of the next ready list); repeat until no actor is ready, then time advances.
// - A put (send) is two simcalls, isend then wait; a get (receive) is irecv then wait. A mailbox
//   matches a send with the oldest pending receive (and the other way round); the transfer starts
//   at the match and lasts the route's latency plus the payload's bytes at the route's bandwidth.
//   When it ends, the actor that waited first is woken first.
// - Time is SimGrid's: a double, advanced in steps to the earliest end among the pending actions
//   (a sleep's remaining duration, a transfer's remaining latency, work / rate), and every pending
//   action is then brought up to date by the step with SimGrid's own arithmetic (a duration or
//   latency with less than 1e-9 s left is over, work with less than 1e-14 left is done). Doing
//   exactly SimGrid's double operations, in its order, is what makes two events that fall on the
//   same nanosecond come out in SimGrid's order (its rounding decides, not the exact sum).
// - Actions ending at one step are handled in the order they were started.
// - Creating an actor queues the new actor before its creator; sleep_for(0) is no simcall at all.
// - An actor may stop the whole simulation in the middle of its run to exchange a message with
//   the outside world (Batsim's request-reply actor talks to the scheduler over ZeroMQ while
//   simulated time stands still): Engine::run() returns the message, and the actor goes on at
//   the next run() (the layer above hands it the reply by its own means).
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>


namespace vtime::sim::kernel {

// What a mailbox carries; the layer above derives its messages from it.
struct Parcel {
  virtual ~Parcel() = default;
};

struct Actor;
class Engine;

// The coroutine type of an actor's code.
class Body {
 public:
  struct promise_type {
    Actor* actor = nullptr;
    Body get_return_object() { return Body(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { throw; }
  };
  Body(Body&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Body& operator=(Body&&) = delete;
  ~Body() {
    if (h_) h_.destroy();
  }

 private:
  friend class Engine;
  explicit Body(std::coroutine_handle<promise_type> h) : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

// How a message crosses from one host to another (hosts are the layer above's numbers): the
// route's latency, then its one byte at `rate` (bytes/s); `links` false when the route has no
// link at all (then it is over with its latency).
struct Transfer {
  double latency = 0;
  double rate = 0;
  bool links = false;
};
using RouteCost = std::function<Transfer(int src, int dst)>;

struct Mailbox;
struct Comm;

struct Simcall {
  enum Kind : uint8_t { none, isend, irecv, wait, sleep, exec, cancel, create, kill, exit };
  Kind kind = none;
  Mailbox* mbox = nullptr;
  std::unique_ptr<Parcel> parcel;  // isend
  Comm* comm = nullptr;            // wait
  double duration = 0;             // sleep; exec: its rate (fraction of the work per second)
  bool no_work = false;            // exec: nothing to compute (ends at the next step)
  std::optional<double> timeout;   // exec
  Actor* other = nullptr;          // create (the new actor), kill (the victim)
};

struct Actor {
  uint64_t pid = 0;
  int host = 0;
  std::coroutine_handle<Body::promise_type> code;
  Simcall call;                     // issued during the last run, handled after the sub-round
  Comm* then_wait = nullptr;        // second half of a put/get: wait on this comm next run
  Comm* comm = nullptr;             // the comm it sends or receives, while it does
  std::unique_ptr<Parcel> received; // what the last get delivered
  bool dead = false;
  // Its pending timed actions: a sleep, or an execution and its timeout.
  struct Action* sleep = nullptr;
  struct Action* exec = nullptr;
  struct Action* timeout = nullptr;
  enum class Outcome : uint8_t { done, timed_out, cancelled } outcome = Outcome::done;  // of the last exec
};

// A timed action, as SimGrid's ptask_L07 keeps it: a sleep (a duration), an execution (work at a
// rate) or its timeout (a duration), or a transfer (a latency, then its work at a rate).
struct Action {
  enum Kind : uint8_t { sleep, exec, timeout, transfer };
  Kind kind = sleep;
  double max_duration = -1;         // sleep, timeout; -1: none
  double latency = 0;               // transfer: left to pay
  double remains = 1;               // exec, transfer: work left (1 = all of it)
  double rate = 0;                  // what the last solve gave (0 while the latency is paid)
  double next_rate = 0;             // the rate once the latency is paid
  bool active = false;              // SimGrid's penalty > 0: the work progresses at the next solve
  Actor* actor = nullptr;           // sleep, exec, timeout
  Comm* comm = nullptr;             // transfer
  bool gone = false;                // cancelled or finished: dropped at the end of the step
};

struct Comm {
  Mailbox* mbox = nullptr;          // while unmatched
  Actor* src = nullptr;
  Actor* dst = nullptr;
  std::unique_ptr<Parcel> parcel;
  std::vector<Actor*> waiters;      // in the order they started waiting
  bool done = false;
};

struct Mailbox {
  std::deque<Comm*> queue;          // unmatched sends, or unmatched receives
  bool holds_sends = false;
  bool empty() const { return queue.empty() || !holds_sends; }
};

class Engine {
 public:
  explicit Engine(RouteCost cost) : cost_(std::move(cost)) {}
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  double now() const { return now_; }

  // Starts an actor on `host`: it runs in the next sub-round (from outside any actor).
  Actor* start(int host, Body body);

  // Runs until an actor asks to exchange a message with the outside world (returns it), or until
  // nothing can happen any more (nullopt: every actor is blocked for ever or gone). After an
  // exchange, the actor that asked goes on first at the next run().
  std::optional<std::string> run();

  // ---- awaitables for actor code (co_await engine.put(...), ...)
  struct Await {
    Engine* e;
    Simcall call;
    bool ready = false;  // no simcall needed (sleep_for(0))
    bool await_ready() const noexcept { return ready; }
    void await_suspend(std::coroutine_handle<Body::promise_type> h) { h.promise().actor->call = std::move(call); }
    void await_resume() const noexcept {}
  };
  struct AwaitGet {
    Engine* e;
    Mailbox* mbox;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<Body::promise_type> h);
    std::unique_ptr<Parcel> await_resume();
    Actor* self = nullptr;
  };
  struct AwaitExec {
    Engine* e;
    Simcall call;
    Actor* self = nullptr;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<Body::promise_type> h) {
      self = h.promise().actor;
      self->call = std::move(call);
    }
    Actor::Outcome await_resume() const noexcept { return self->outcome; }
  };
  struct AwaitExchange {
    Engine* e;
    std::string text;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<Body::promise_type> h);
    void await_resume() const noexcept {}
  };
  // Sends `parcel` to `mbox` and waits until it is received and transferred.
  Await put(Mailbox& mbox, std::unique_ptr<Parcel> parcel);
  AwaitGet get(Mailbox& mbox) { return AwaitGet{this, &mbox}; }
  // Sleeps `d` seconds (no simcall at all when d <= 0, as s4u's sleep_for).
  Await sleep_for(double d);
  // Computes at `rate` (the fraction of the work done per second: a parallel task alone on its
  // hosts), giving up after `timeout` seconds if given: done when the computation ends at or
  // before the timeout's step, timed_out otherwise; cancelled if another actor cancelled it.
  // With no work at all the computation still ends at the next step.
  AwaitExec exec(double rate, bool no_work, std::optional<double> timeout);
  // Cancels another actor's computation: it resumes with `cancelled` once this sub-round's
  // simcalls are handled.
  Await cancel(Actor* victim);
  // Stops the simulation: run() returns nullopt as soon as the running actor yields.
  void halt() { halted_ = true; }
  // Creates an actor on `host` (it runs before its creator in the next sub-round).
  Await create(int host, Body body);
  // Kills an actor: its pending sleep or unmatched message is cancelled, it never runs again.
  Await kill(Actor* victim);
  AwaitExchange exchange(std::string text) { return AwaitExchange{this, std::move(text)}; }

  size_t live_actors() const { return actors_.size(); }

 private:
  Actor* make(int host, Body body);
  void run_one(Actor* a);
  void handle(Actor* a);
  Await on_actor(Simcall::Kind kind, Actor* other);  // a simcall about another actor
  void match(Actor* a, Simcall& c, bool sending);
  // HostL07Model::update_actions_state for one action and a step of `delta`: true when it ends.
  static bool update(Action& a, double delta);
  static void forget(Comm* c);  // its actors no longer refer to it; freed
  void start_transfer(Comm* c);
  void answer(Actor* a) { to_run_.push_back(a); }
  bool advance();
  void finish(Action& act);
  Action* add(Action a);
  void destroy(Actor* a);

  RouteCost cost_;
  double now_ = 0;
  uint64_t next_pid_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Actor>> actors_;  // alive, by pid
  std::vector<Actor*> to_run_;
  std::vector<Actor*> running_;     // the current sub-round
  size_t cursor_ = 0;               // next actor of running_ to run
  bool handled_ = false;            // running_'s simcalls handled
  std::vector<std::unique_ptr<Action>> actions_;  // started and not over, in start order
  std::vector<std::unique_ptr<Action>> spare_;    // over, for reuse (one allocation per action otherwise)
  std::vector<Action*> done_;                     // ending at the current step
  size_t gone_ = 0;                               // actions_ marked gone
  // Actions due at the next step whatever it is (no work left, or less than the precision left
  // of a duration or latency), in start order: while there are some, the step is 0 and touches
  // nothing else (every other value minus 0 is itself), so it need not scan every action.
  std::vector<Action*> instant_;
  static bool is_instant(const Action& a);
  static bool is_tiny(const Action& a);
  Actor* exchanging_ = nullptr;     // stopped in an exchange
  std::string outgoing_;
  std::vector<Actor*> graveyard_;    // killed or ended during this sub-round
  std::vector<Actor*> cancelled_;    // answered once the sub-round's simcalls are handled
  bool halted_ = false;
  void drop(Action*& a);
};

}  // namespace vtime::sim::kernel
