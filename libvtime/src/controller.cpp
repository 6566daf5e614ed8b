// The controller's loop (see controller.h): looks until the tree is idle, hands the tree over
// under the serial gate, answers Go's sysmon, and advances the clock. Each decision is a part
// of its own, and only this loop calls across them:
//   idle_look.h      whether the tree is idle now (kernel count, /proc scans and their proofs)
//   tree_members.h   who belongs to the tree; slots of the dead
//   waker.h          which due waits an advance wakes, in which order, and how
//   turn_order.h     whose turn comes first (advance_step, the serial gate)
//   go_sysmon.h      which of Go's sysmon sleeps end early
//   running_clock.h  when the clock runs with real time (CPU-time model); the clock's writer
//   tree_report.h    what each thread waits on, in words
#include <vtime/controller.h>

#include <vtime/log.h>
#include <vtime/tree_watch.h>

#include <vtime/internal/futex.h>
#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/proc_reader.h>

#include "go_sysmon.h"
#include "idle_look.h"
#include "running_clock.h"
#include "tree_members.h"
#include "tree_report.h"
#include "turn_order.h"
#include "waiter_kinds.h"
#include "waker.h"

#include <sched.h>

#include <algorithm>
#include <ctime>

namespace vtime {

using detail::IdleLook;
using detail::Marks;
using detail::Snapshot;

struct Controller::Impl {
  abi::Segment& seg;
  pid_t root;
  detail::ProcReader proc;
  ControllerStats stats;
  // Sleeps of traced images that the controller answers itself (abi::kTracerNotify).
  detail::NotifiedSleeps notify{seg};
  detail::TreeMembers members{seg, root, proc};
  IdleLook look;
  detail::Waker waker{seg, notify, [this](const std::vector<pid_t>& pids) { return turns.first_turn(pids); }};
  detail::TurnOrder turns{seg, root, proc};  // the serial gate's turn order and hand-overs
  detail::GoSysmon sysmon{seg, proc};        // Go's sysmon sleeps
  detail::RunningClock clock{seg, proc,
                             {.pids = [this] { return members.pids(); },
                              .advance = [this](TimePoint t) { return advance(t, false); },
                              .describe = [this] { return describe(); }}};

  Impl(Session& s, pid_t r, TreeWatch* w)
      : seg(s.segment()), root(r), look(seg, members, proc, notify, adopted(w, r)) {}

  // The kernel count, when `w` adopted the tree's root (see idle_look.h, "Kernel count").
  static TreeWatch* adopted(TreeWatch* w, pid_t r) {
    if (w && r > 0 && w->watches(r)) return w;
    if (w) VTIME_LOGF("controller", LogLevel::kInfo, "the tree watch did not adopt pid %d: idle decisions read /proc", r);
    return nullptr;
  }

  // advance_to (one_process false) and advance_step (true); `in_stats`: an advance of time (not
  // nudge_sysmon's, which moves none).
  int advance(TimePoint t, bool one_process, bool in_stats = true);
  bool nudge_sysmon();
  // The two rules' loops of look_until_idle: with the kernel count (nullopt once it gave the
  // count up: the /proc rule goes on), and with /proc.
  std::optional<IdleResult> look_with_count(const std::function<bool()>& interrupted);
  IdleResult look_with_proc(const std::function<bool()>& interrupted);
  std::vector<ThreadReport> describe() { return detail::describe_tree(seg, proc, members.pids()); }

  // Sleeps `us` microseconds of real time, unless the session ends.
  void pause_us(long us) {
    auto& h = seg.header;
    uint32_t w = h.controller_word.load(std::memory_order_acquire);
    timespec ts{us / 1000000, (us % 1000000) * 1000};
    detail::futex_wait(&h.controller_word, w, &ts);
  }

  // Sleeps until a wait begins or ends somewhere in the tree, or `budget_us` of real time passed
  // (a thread blocking in a call we do not intercept tells nobody).
  void wait_activity(uint64_t seen_activity, long budget_us) {
    auto& h = seg.header;
    uint32_t w = h.controller_word.load(std::memory_order_acquire);
    h.controller_waiting.store(1, std::memory_order_seq_cst);
    if (h.activity.load(std::memory_order_seq_cst) == seen_activity) {
      timespec ts{budget_us / 1000000, (budget_us % 1000000) * 1000};
      detail::futex_wait(&h.controller_word, w, &ts);
    }
    h.controller_waiting.store(0, std::memory_order_relaxed);
  }
};

Controller::Controller(Session& session, pid_t root, TreeWatch* watch)
    : impl_(std::make_unique<Impl>(session, root, watch)) {}
Controller::~Controller() = default;

// How long a decision watches the kernel count before sleeping until the program wakes it.
constexpr int64_t kKernelSpinNs = 50000;
// How long the count may say "a thread is active" before /proc is asked whether one is.
constexpr int64_t kCountCheckNs = 500'000'000;

IdleResult Controller::wait_idle(const std::function<bool()>& interrupted) {
  IdleResult r = look_until_idle(interrupted);
  // The serial gate: the tree is idle but for held processes; each gets the tree in turn.
  // And Go's sysmon, where a process's timers need it (nudge_sysmon).
  while (r == IdleResult::kIdle && (impl_->turns.hand_over() || impl_->nudge_sysmon())) r = look_until_idle(interrupted);
  // What a recorder reads at this idle point (vtime/observe.h) must not include a tracer wait
  // the kernel already ended: whether Go's poller was woken early by a descriptor (libzmq's I/O
  // thread) or reached its timeout depends on real time (equivalence.go_replay saw an extra timer
  // record once). next_deadline() drops them too, but after the recorder looked.
  if (r == IdleResult::kIdle) impl_->look.drop_ended_tracer_waits();
  return r;
}

IdleResult Controller::look_until_idle(const std::function<bool()>& interrupted) {
  if (impl_->look.kernel_count()) {
    if (std::optional<IdleResult> r = impl_->look_with_count(interrupted)) return *r;
    // The kernel count gave up (logged): decide with /proc from here on.
  }
  return impl_->look_with_proc(interrupted);
}

std::optional<IdleResult> Controller::Impl::look_with_count(const std::function<bool()>& interrupted) {
  int busy_rounds = 0;
  int64_t active_since = 0;  // real time since which every look found a thread active
  while (TreeWatch* watch = look.kernel_count()) {
    if (interrupted && interrupted()) {
      clock.end_busy();
      return IdleResult::kInterrupted;
    }
    bool busy_active = false;
    uint32_t unconsumed = 0;
    if (look.kernel_look(&busy_active, &unconsumed)) {
      ++stats.idle_decisions;
      look.set_last_scan_busy(false);
      clock.end_busy();
      return IdleResult::kIdle;
    }
    if (!look.kernel_count()) break;  // the look gave the kernel count up
    // Rounds count consecutive looks that saw no thread run: a thread that ran starts a new
    // stretch (the back-off below must not carry over from an earlier one: reliability issue).
    busy_rounds = busy_active ? 0 : busy_rounds + 1;
    // The count said "active" for a long time: a program computing, usually. But a traced Go
    // program under load (equivalence.go_fcfs.kit_10h_80, ~1 run in 15) once left it at one
    // while every thread of the tree slept and the tracer waited: the broker then reported a
    // busy loop after its crash timeout. Not explained yet (docs/shim.md). Whenever the count
    // has said so for kCountCheckNs, /proc is asked; if its rule sees the whole tree asleep,
    // the count is given up and the /proc rule, which never relied on it, decides from here.
    if (!busy_active) {
      active_since = 0;
    } else if (const int64_t now = real_monotonic_ns(); active_since == 0) {
      active_since = now;
    } else if (now - active_since >= kCountCheckNs) {
      active_since = now;
      if (look.proc_sees_tree_asleep()) {
        look.give_up_kernel_count("the kernel count saw a thread active for 0.5 s while /proc saw every thread asleep");
        break;
      }
    }
    long cap = clock.on_busy();
    if (unconsumed >= 16) {
      pause_us(std::min<long>(cap, 2L * unconsumed));  // as in look_with_proc: let the woken run first
    } else if (busy_active) {
      // Most waits here are a woken thread's few microseconds of work. Watching the count for a
      // while, giving the cpu to whoever wants it, answers sooner than being woken by the
      // program: an idle vcpu woken from its halt costs tens of microseconds on this kind of
      // virtual machine (kit_10h_80 with periodic_fcfs: 6.1-6.4 s instead of 6.9-7.0 s).
      int64_t until = real_monotonic_ns() + kKernelSpinNs;
      while (watch->counts().active != 0 && real_monotonic_ns() < until) sched_yield();
      if (watch->counts().active == 0) continue;
      // Then the program says when the count drops to zero; the budget only bounds how long
      // `interrupted` goes unasked.
      // A listener left readable would end every wait at once: its notifications first.
      notify.take(watch);
      watch->wait_quiet(cap);
    } else if (busy_rounds < 4) {
      sched_yield();
    } else {
      wait_activity(seg.header.activity.load(std::memory_order_seq_cst),
                    std::min<long>(cap, 20L << std::min(busy_rounds - 4, 7)));
    }
  }
  return std::nullopt;
}

IdleResult Controller::Impl::look_with_proc(const std::function<bool()>& interrupted) {
  auto& h = seg.header;
  Snapshot prev;
  bool have_prev = false;
  Marks prev_marks;
  int busy_rounds = 0;
  for (;;) {
    if (interrupted && interrupted()) {
      clock.end_busy();
      return IdleResult::kInterrupted;
    }
    notify.take(nullptr);  // the kernel count was given up with notified sleeps about
    const Marks m1 = Marks::read(h);
    // A scan that follows a quiet one may end the decision: it must re-read the proven sleepers
    // (the candidate scan before it relied on proofs made earlier).
    Snapshot snap = look.scan(have_prev, m1.activity);
    // A wait begun or ended, or the tracer taking an exit, meanwhile: busy.
    const Marks m2 = Marks::read(h);
    const bool busy = snap.busy || !m1.settled() || m2 != m1;
    look.set_last_scan_busy(busy);
    if (busy) {
      have_prev = false;
      ++busy_rounds;
      long cap = clock.on_busy();
      if (snap.unconsumed >= 16) {
        // Many wake-ups not handled yet (one advance woke many sleepers): the tree cannot be
        // idle before each of them ran, which takes every one of them a few microseconds of
        // cpu. Looking again sooner would only take a cpu from them, and so would being woken
        // by every one of them that begins or ends a wait: sleep for a time in proportion,
        // without asking to be woken. Only when to look again depends on this; what is seen
        // then is decided as always.
        pause_us(std::min<long>(cap, 2L * snap.unconsumed));
      } else if (busy_rounds < 4) {
        sched_yield();  // the usual case: a thread about to block finishes doing so
      } else {
        long budget = std::min<long>(cap, 20L << std::min(busy_rounds - 4, 7));
        wait_activity(m2.activity, budget);
      }
      continue;
    }
    if (have_prev && prev_marks == m2 && snap == prev) {
      ++stats.idle_decisions;
      clock.end_busy();
      return IdleResult::kIdle;
    }
    busy_rounds = 0;  // a quiet scan ends a busy stretch: the next one backs off from the start
    prev = std::move(snap);
    prev_marks = m2;
    have_prev = true;
  }
}

// Go's sysmon (go_sysmon.h): at an idle point, the sysmon sleeps a Go process's timers wait
// for end now, at most GoSysmon::kNudgesPerInstant times per instant.
bool Controller::Impl::nudge_sysmon() {
  const int64_t now = Session::read_clock(seg.header.clock).ns();
  if (!sysmon.may_nudge(now)) return false;
  bool any = false;
  for (const detail::GoSysmon::Sleep& s : sysmon.needing(abi::kNoDeadline)) {
    auto& w = seg.waiters[s.index];
    uint32_t expected = abi::kWaiting;
    if (!w.state.compare_exchange_strong(expected, abi::kWaking, std::memory_order_seq_cst)) continue;
    const bool same = w.seq.load(std::memory_order_acquire) == s.seq;
    if (same) w.deadline.store(now, std::memory_order_relaxed);
    if (detail::finish_waking(w, abi::kWaiting) && same) any = true;
  }
  if (!any) return false;
  sysmon.nudged();
  ++stats.sysmon_nudges;
  VTIME_LOGF("controller", LogLevel::kDebug, "sysmon nudged at %lld (%d at this instant)", static_cast<long long>(now),
             sysmon.nudges_at_this_instant());
  advance(TimePoint::from_ns(now), seg.header.serial.load(std::memory_order_acquire) != 0, false);
  return true;
}

int Controller::Impl::advance(TimePoint t, bool one_process, bool in_stats) {
  // An advance that did not follow an idle decision (the broker's timeout policy, a running
  // clock) takes the sleeps notified meanwhile first (notify_sleeps.h): nothing else would.
  if (!one_process) notify.take(look.kernel_count());
  auto& h = seg.header;
  look.drop_ended_tracer_waits();
  clock.set_now(t);
  const detail::Waker::Plan plan = waker.plan(t, one_process);
  if (plan.give_to) turns.give_tree(*plan.give_to);
  int woken = waker.wake(t, one_process, plan.serial, look.kernel_count() != nullptr);
  if (in_stats) {
    h.advances.fetch_add(1, std::memory_order_relaxed);
    h.wakeups.fetch_add(static_cast<uint64_t>(woken), std::memory_order_relaxed);
    ++stats.advances;
    stats.wakeups += static_cast<uint64_t>(woken);
  }
  return woken;
}

std::optional<TimePoint> Controller::next_deadline() {
  impl_->look.drop_ended_tracer_waits();
  // A sleep of sysmon where it must run for its process's timers and the nudges gave up
  // (go_sysmon.h), or the table's earliest deadline.
  return impl_->sysmon.idle_deadline(detail::earliest_deadline(impl_->seg));
}

void Controller::set_now(TimePoint t) { impl_->clock.set_now(t); }
void Controller::set_rate(double factor) { impl_->clock.set_rate(factor); }
void Controller::set_cpu_model(const CpuModelOptions& cpu) { impl_->clock.set_model(cpu); }
void Controller::set_serial(bool on) { impl_->seg.header.serial.store(on ? 1 : 0, std::memory_order_release); }
void Controller::watch_own_threads(bool on) { impl_->look.watch_own_threads(on); }
int Controller::advance_to(TimePoint t) { return impl_->advance(t, false); }
int Controller::advance_step(TimePoint t) { return impl_->advance(t, true); }
std::vector<pid_t> Controller::tree_pids() { return impl_->members.pids(); }
bool Controller::root_exited() { return impl_->members.root_exiting(); }
void Controller::reclaim_dead() { impl_->look.reclaim_dead(); }
std::vector<ThreadReport> Controller::describe() { return impl_->describe(); }

ControllerStats Controller::stats() const {
  ControllerStats s = impl_->stats;
  s.scans = impl_->look.scans();
  s.busy_flows = impl_->clock.busy_flows();
  s.kernel_count = impl_->look.kernel_count() != nullptr;
  s.handovers = impl_->seg.header.serial_handovers.load(std::memory_order_relaxed);
  s.notified = impl_->notify.answered();
  return s;
}

}  // namespace vtime
