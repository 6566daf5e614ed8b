#include "kernel.h"

#include <algorithm>

namespace vtime::sim::kernel {

namespace {
// SimGrid 3.32's surf/precision and maxmin/precision (surf_interface.cpp, lmm/System.cpp).
constexpr double kSurfPrecision = 1e-9;
constexpr double kMaxminPrecision = 1e-5;

// SimGrid's double_update: what is left below the precision is nothing.
void double_update(double& variable, double value, double precision) {
  variable -= value;
  if (variable < precision) variable = 0.0;
}
}  // namespace

Engine::~Engine() {
  for (auto& [pid, a] : actors_) {
    // Unmatched or in flight: freed once, by whichever of its two actors comes first.
    if (a->comm) forget(a->comm);
    a->code.destroy();
  }
}

Actor* Engine::make(int host, Body body) {
  auto a = std::make_unique<Actor>();
  a->pid = next_pid_++;
  a->host = host;
  a->code = std::exchange(body.h_, {});
  a->code.promise().actor = a.get();
  Actor* raw = a.get();
  actors_.emplace(raw->pid, std::move(a));
  return raw;
}

Actor* Engine::start(int host, Body body) {
  Actor* a = make(host, std::move(body));
  answer(a);
  return a;
}

Engine::Await Engine::put(Mailbox& mbox, std::unique_ptr<Parcel> parcel) {
  Simcall c;
  c.kind = Simcall::isend;
  c.mbox = &mbox;
  c.parcel = std::move(parcel);
  return Await{this, std::move(c)};
}

Engine::Await Engine::sleep_for(double d) {
  Simcall c;
  if (d <= 0) return Await{this, std::move(c), true};  // s4u: a no-op, no simcall
  c.kind = Simcall::sleep;
  c.duration = d;
  return Await{this, std::move(c)};
}

Engine::AwaitExec Engine::exec(double rate, bool no_work, std::optional<double> timeout) {
  Simcall c;
  c.kind = Simcall::exec;
  c.duration = rate;
  c.no_work = no_work;
  c.timeout = timeout;
  return AwaitExec{this, std::move(c)};
}

Engine::Await Engine::on_actor(Simcall::Kind kind, Actor* other) {
  Simcall c;
  c.kind = kind;
  c.other = other;
  return Await{this, std::move(c)};
}

Engine::Await Engine::cancel(Actor* victim) { return on_actor(Simcall::cancel, victim); }

Engine::Await Engine::create(int host, Body body) { return on_actor(Simcall::create, make(host, std::move(body))); }

Engine::Await Engine::kill(Actor* victim) { return on_actor(Simcall::kill, victim); }

void Engine::AwaitGet::await_suspend(std::coroutine_handle<Body::promise_type> h) {
  self = h.promise().actor;
  self->call.kind = Simcall::irecv;
  self->call.mbox = mbox;
}

std::unique_ptr<Parcel> Engine::AwaitGet::await_resume() { return std::move(self->received); }

void Engine::AwaitExchange::await_suspend(std::coroutine_handle<Body::promise_type> h) {
  e->exchanging_ = h.promise().actor;
  e->outgoing_ = std::move(text);
}

std::optional<std::string> Engine::run() {
  if (exchanging_) {
    // The actor that stopped the world goes on with its reply, then the sub-round resumes.
    Actor* a = std::exchange(exchanging_, nullptr);
    a->code.resume();
    if (a->code.done()) a->call.kind = Simcall::exit;
    if (exchanging_) return std::move(outgoing_);
  }
  for (;;) {
    if (halted_) return std::nullopt;
    while (cursor_ < running_.size()) {
      run_one(running_[cursor_++]);
      if (halted_) return std::nullopt;
      if (exchanging_) return std::move(outgoing_);
    }
    // The simcalls of the sub-round, in the order the actors ran.
    for (Actor* a : running_) handle(a);
    running_.clear();
    cursor_ = 0;
    for (Actor* a : cancelled_) answer(a);
    cancelled_.clear();
    if (!graveyard_.empty()) {
      for (Actor* a : graveyard_) {
        to_run_.erase(std::remove(to_run_.begin(), to_run_.end(), a), to_run_.end());
        a->code.destroy();
        actors_.erase(a->pid);
      }
      graveyard_.clear();
    }
    if (to_run_.empty() && !advance()) return std::nullopt;
    std::swap(running_, to_run_);
  }
}

void Engine::run_one(Actor* a) {
  if (a->dead) return;
  if (a->then_wait) {
    a->call.kind = Simcall::wait;
    a->call.comm = std::exchange(a->then_wait, nullptr);
    return;
  }
  a->code.resume();
  if (a->code.done()) a->call.kind = Simcall::exit;
}

// Due at a step of 0: work done (the solve's next event is then 0), or a duration of 0.
bool Engine::is_instant(const Action& a) { return (a.active && a.rate > 0 && a.remains <= 0) || a.max_duration == 0; }

// What a step of 0 would end anyway: less than the precision left of a duration or a latency.
bool Engine::is_tiny(const Action& a) {
  return (a.max_duration > 0 && a.max_duration < kSurfPrecision) || (a.latency > 0 && a.latency < kSurfPrecision);
}

Action* Engine::add(Action a) {
  if (spare_.empty()) {
    actions_.push_back(std::make_unique<Action>(a));
  } else {
    actions_.push_back(std::move(spare_.back()));
    spare_.pop_back();
    *actions_.back() = a;
  }
  Action* p = actions_.back().get();
  if (is_instant(*p) || is_tiny(*p)) instant_.push_back(p);
  return p;
}

void Engine::drop(Action*& a) {
  if (a && !a->gone) {
    a->gone = true;
    ++gone_;
  }
  a = nullptr;
}

void Engine::handle(Actor* a) {
  Simcall c = std::move(a->call);
  a->call = Simcall{};
  if (a->dead) return;
  switch (c.kind) {
    case Simcall::none: break;
    case Simcall::exit:
      a->dead = true;
      graveyard_.push_back(a);
      break;
    case Simcall::isend:
    case Simcall::irecv:
      match(a, c, c.kind == Simcall::isend);
      answer(a);
      break;
    case Simcall::wait:
      if (c.comm->done) answer(a);
      else c.comm->waiters.push_back(a);
      break;
    case Simcall::sleep: {
      // CpuL07::sleep: an action with a maximum duration and no rate.
      Action act;
      act.kind = Action::sleep;
      act.max_duration = c.duration;
      act.actor = a;
      a->sleep = add(act);
      break;
    }
    case Simcall::exec: {
      // The computation is started before its timeout: at a tie, it ends first (SimGrid answers
      // the execution, then drops the timeout).
      Action act;
      act.kind = Action::exec;
      act.actor = a;
      act.active = true;
      act.rate = act.next_rate = c.no_work ? 1.0 : c.duration;  // a variable with no work gets 1
      act.remains = c.no_work ? 0.0 : 1.0;
      a->exec = add(act);
      if (c.timeout) {
        Action to;
        to.kind = Action::timeout;
        to.max_duration = *c.timeout;
        to.actor = a;
        a->timeout = add(to);
      }
      break;
    }
    case Simcall::cancel: {
      Actor* v = c.other;
      if (!v->dead && v->exec) {
        drop(v->exec);
        drop(v->timeout);
        v->outcome = Actor::Outcome::cancelled;
        cancelled_.push_back(v);
      }
      answer(a);
      break;
    }
    case Simcall::create:
      answer(c.other);
      answer(a);
      break;
    case Simcall::kill: {
      Actor* v = c.other;
      if (!v->dead) {
        v->dead = true;
        drop(v->sleep);
        drop(v->exec);
        drop(v->timeout);
        if (Comm* m = v->comm; m && m->mbox) {  // unmatched: withdrawn from its mailbox
          auto& q = m->mbox->queue;
          q.erase(std::remove(q.begin(), q.end(), m), q.end());
          forget(m);
          v->then_wait = nullptr;
        }
        graveyard_.push_back(v);
      }
      answer(a);
      break;
    }
  }
}

void Engine::match(Actor* a, Simcall& c, bool sending) {
  Mailbox& m = *c.mbox;
  Comm* comm;
  bool matched = !m.queue.empty() && m.holds_sends != sending;
  if (matched) {
    comm = m.queue.front();
    m.queue.pop_front();
    comm->mbox = nullptr;
  } else {
    comm = new Comm;
    comm->mbox = &m;
    m.queue.push_back(comm);
    m.holds_sends = sending;
  }
  if (sending) {
    comm->src = a;
    comm->parcel = std::move(c.parcel);
  } else {
    comm->dst = a;
  }
  a->then_wait = comm;
  a->comm = comm;
  if (matched) start_transfer(comm);
}

void Engine::start_transfer(Comm* c) {
  // NetworkL07Model::communicate: a parallel task of one byte from src to dst. Without a link (and
  // no computation) it has no work at all; with a latency it makes no progress until it is paid.
  Transfer t = cost_(c->src->host, c->dst->host);
  Action act;
  act.kind = Action::transfer;
  act.comm = c;
  act.latency = t.latency;
  act.remains = t.links ? 1.0 : 0.0;
  act.next_rate = t.links ? t.rate : 1.0;
  act.active = !(t.latency > 0);
  act.rate = act.active ? act.next_rate : 0.0;
  add(act);
}

bool Engine::update(Action& a, double delta) {
  if (a.latency > 0) {
    if (a.latency > delta) double_update(a.latency, delta, kSurfPrecision);
    else a.latency = 0.0;
    if (a.latency <= 0.0) a.active = true;  // the rate counts from the next solve on
  }
  double_update(a.remains, a.rate * delta, kMaxminPrecision * kSurfPrecision);
  if (a.max_duration >= 0) double_update(a.max_duration, delta, kSurfPrecision);
  // Sleeps and timeouts are never active (SimGrid's penalty 0): only their duration ends them.
  bool over = (a.remains <= 0 && a.active) || (a.max_duration >= 0 && a.max_duration <= 0);
  // The next solve's rate: the lone variable's share (no two transfers ever overlap).
  if (a.active) a.rate = a.next_rate;
  return over;
}

// EngineImpl::solve with HostL07Model's next_occurring_event and update_actions_state.
bool Engine::advance() {
  // Actions over or cancelled since the last step leave the started list now (and the instant
  // list first: a spare action may be reused before the next step).
  instant_.erase(std::remove_if(instant_.begin(), instant_.end(), [](const Action* a) { return a->gone; }),
                 instant_.end());
  if (gone_ > 0) {
    size_t kept = 0;
    for (auto& a : actions_) {
      if (a->gone) spare_.push_back(std::move(a));
      else actions_[kept++] = std::move(a);
    }
    actions_.resize(kept);
    gone_ = 0;
  }
  if (actions_.empty()) return false;
  std::vector<Action*>& done = done_;
  done.clear();
  if (std::any_of(instant_.begin(), instant_.end(), [](const Action* a) { return is_instant(*a); })) {
    // A step of 0: only the instant (and tiny) actions change; any other value minus 0 is itself.
    for (Action* a : instant_)
      if (update(*a, 0.0)) done.push_back(a);
    instant_.clear();
  } else {
    double delta = -1.0;
    for (const auto& a : actions_) {
      if (a->active && a->rate > 0) {
        double v = a->remains > 0 ? a->remains / a->rate : 0.0;
        if (delta < 0 || v < delta) delta = v;
      }
      if (a->max_duration >= 0 && (delta < 0 || a->max_duration < delta)) delta = a->max_duration;
    }
    for (const auto& a : actions_)
      if (a->latency > 0 && (delta < 0 || a->latency < delta)) delta = a->latency;
    if (delta < 0) return false;
    now_ += delta;
    instant_.clear();
    for (const auto& p : actions_) {
      if (update(*p, delta)) done.push_back(p.get());
      else if (!p->gone && (is_instant(*p) || is_tiny(*p))) instant_.push_back(p.get());
    }
  }
  for (Action* a : done) {
    if (a->gone) continue;  // cancelled by an earlier one of this step (an execution's timeout)
    finish(*a);
  }
  return true;
}

void Engine::finish(Action& act) {
  act.gone = true;
  ++gone_;
  Actor* a = act.actor;
  switch (act.kind) {
    case Action::sleep:
      a->sleep = nullptr;
      answer(a);
      return;
    case Action::exec:
      a->exec = nullptr;
      drop(a->timeout);
      a->outcome = Actor::Outcome::done;
      answer(a);
      return;
    case Action::timeout:
      a->timeout = nullptr;
      drop(a->exec);
      a->outcome = Actor::Outcome::timed_out;
      answer(a);
      return;
    case Action::transfer: break;
  }
  Comm* c = act.comm;
  c->done = true;
  if (c->dst) c->dst->received = std::move(c->parcel);
  for (Actor* w : c->waiters) answer(w);
  forget(c);
}

void Engine::forget(Comm* c) {
  if (c->src) c->src->comm = nullptr;
  if (c->dst) c->dst->comm = nullptr;
  delete c;
}

}  // namespace vtime::sim::kernel
