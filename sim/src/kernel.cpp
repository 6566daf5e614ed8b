#include "kernel.h"

#include <algorithm>

namespace vtime::sim::kernel {

namespace {
// SimGrid's precision/timing: a sleep or a latency with less than this left at a step is over.
const SimTime kTimingPrecision = SimTime::from_nanos(Nanos::from_ns(1));
}  // namespace

Engine::~Engine() {
  for (auto& [pid, a] : actors_) {
    if (Comm* c = a->comm) {
      // Unmatched or in flight: free it once, whichever of its two actors comes first.
      if (c->src) c->src->comm = nullptr;
      if (c->dst) c->dst->comm = nullptr;
      delete c;
    }
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

Engine::Await Engine::sleep_for(SimTime d) {
  Simcall c;
  if (d <= SimTime::zero()) return Await{this, std::move(c), true};  // s4u: a no-op, no simcall
  c.kind = Simcall::sleep;
  c.duration = std::max(d, kTimingPrecision);
  return Await{this, std::move(c)};
}

Engine::AwaitExec Engine::exec(SimTime d, std::optional<SimTime> timeout) {
  Simcall c;
  c.kind = Simcall::exec;
  c.duration = d;
  c.timeout = timeout;
  return AwaitExec{this, std::move(c)};
}

Engine::Await Engine::cancel(Actor* victim) {
  Simcall c;
  c.kind = Simcall::cancel;
  c.other = victim;
  return Await{this, std::move(c)};
}

Engine::Await Engine::create(int host, Body body) {
  Simcall c;
  c.kind = Simcall::create;
  c.other = make(host, std::move(body));
  return Await{this, std::move(c)};
}

Engine::Await Engine::kill(Actor* victim) {
  Simcall c;
  c.kind = Simcall::kill;
  c.other = victim;
  return Await{this, std::move(c)};
}

void Engine::AwaitGet::await_suspend(std::coroutine_handle<Body::promise_type> h) {
  self = h.promise().actor;
  self->call.kind = Simcall::irecv;
  self->call.mbox = mbox;
}

std::unique_ptr<Parcel> Engine::AwaitGet::await_resume() { return std::move(self->received); }

void Engine::AwaitExchange::await_suspend(std::coroutine_handle<Body::promise_type> h) {
  self = h.promise().actor;
  e->exchanging_ = self;
  e->outgoing_ = std::move(text);
}

std::string Engine::AwaitExchange::await_resume() { return std::move(self->reply); }

void Engine::reply(std::string text) {
  if (exchanging_) exchanging_->reply = std::move(text);
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

void Engine::insert(const Action& a) { actions_.insert(a); }

void Engine::drop(const Actor::Key& k) {
  Action key;
  key.end = k.end;
  key.seq = k.seq;
  if (actions_.erase(key) == 0) dropped_.push_back(k.seq);  // already taken for this step
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
      Action act;
      act.kind = Action::sleep;
      act.end = now_ + c.duration;
      act.seq = next_seq_++;
      act.actor = a;
      a->sleep = Actor::Key{act.end, act.seq};
      insert(act);
      break;
    }
    case Simcall::exec: {
      // The computation is started before its timeout: at a tie, it ends first (SimGrid answers
      // the execution, then drops the timeout).
      Action act;
      act.kind = Action::exec;
      act.end = now_ + c.duration;
      act.seq = next_seq_++;
      act.actor = a;
      a->exec = Actor::Key{act.end, act.seq};
      insert(act);
      if (c.timeout) {
        Action to;
        to.kind = Action::timeout;
        to.end = now_ + std::max(*c.timeout, SimTime::zero());
        to.seq = next_seq_++;
        to.actor = a;
        a->timeout = Actor::Key{to.end, to.seq};
        insert(to);
      }
      break;
    }
    case Simcall::cancel: {
      Actor* v = c.other;
      if (!v->dead && v->exec) {
        drop(*v->exec);
        v->exec.reset();
        if (v->timeout) drop(*v->timeout);
        v->timeout.reset();
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
        for (auto* k : {&v->sleep, &v->exec, &v->timeout})
          if (*k) {
            drop(**k);
            k->reset();
          }
        if (Comm* m = v->comm; m && m->mbox) {  // unmatched: withdrawn from its mailbox
          auto& q = m->mbox->queue;
          q.erase(std::remove(q.begin(), q.end(), m), q.end());
          delete m;
          v->comm = nullptr;
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
  Transfer t = cost_(c->src->host, c->dst->host);
  Action act;
  act.kind = Action::transfer;
  act.seq = next_seq_++;
  act.comm = c;
  if (t.latency > SimTime::zero()) {
    act.end = now_ + t.latency;
    act.latency_phase = true;
    act.bytes_time = t.bytes;
  } else {
    act.end = now_ + t.bytes;
  }
  insert(act);
}

bool Engine::advance() {
  if (actions_.empty()) return false;
  SimTime t = actions_.begin()->end;
  std::vector<Action> due;
  for (auto it = actions_.begin(); it != actions_.end() && it->end < t + kTimingPrecision;) {
    if (it->end == t || it->coalesces()) {
      due.push_back(*it);
      it = actions_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(due.begin(), due.end(), [](const Action& x, const Action& y) { return x.seq < y.seq; });
  now_ = t;
  dropped_.clear();
  for (Action& act : due) {
    if (std::find(dropped_.begin(), dropped_.end(), act.seq) != dropped_.end()) continue;
    if (act.latency_phase && act.bytes_time > SimTime::zero()) {
      // The latency is over; the bytes flow from this step on.
      act.latency_phase = false;
      act.end = now_ + act.bytes_time;
      insert(act);
      continue;
    }
    finish(act);
  }
  dropped_.clear();
  return true;
}

void Engine::finish(const Action& act) {
  Actor* a = act.actor;
  switch (act.kind) {
    case Action::sleep:
      a->sleep.reset();
      answer(a);
      return;
    case Action::exec:
      a->exec.reset();
      if (a->timeout) drop(*a->timeout);
      a->timeout.reset();
      a->outcome = Actor::Outcome::done;
      answer(a);
      return;
    case Action::timeout:
      a->timeout.reset();
      if (a->exec) drop(*a->exec);
      a->exec.reset();
      a->outcome = Actor::Outcome::timed_out;
      answer(a);
      return;
    case Action::transfer: break;
  }
  Comm* c = act.comm;
  c->done = true;
  if (c->dst) c->dst->received = std::move(c->parcel);
  for (Actor* w : c->waiters) answer(w);
  if (c->src) c->src->comm = nullptr;
  if (c->dst) c->dst->comm = nullptr;
  delete c;
}

}  // namespace vtime::sim::kernel
