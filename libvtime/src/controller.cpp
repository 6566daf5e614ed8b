// Idle detection and clock advances (see controller.h).
#include <vtime/controller.h>

#include <vtime/log.h>

#include "futex.h"
#include "slots.h"
#include "proc_reader.h"

#include <sched.h>
#include <unistd.h>
#include <signal.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_set>

namespace vtime {

using detail::ProcReader;
using detail::ThreadSample;

std::string to_string(const ThreadReport& t) {
  return "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " (" + t.comm + ") [" +
         std::string(1, t.state) + "]: " + t.waits_on;
}

const char* reason_name(uint32_t reason) {
  static const char* names[] = {"wait", "sleep", "poll", "select", "epoll_wait", "condition variable",
                                "semaphore", "mutex", "rwlock", "futex", "join", "sigtimedwait",
                                "POSIX timer", "timerfd", "alarm/itimer"};
  return reason < abi::kReasonCount ? names[reason] : "wait";
}

namespace {

struct Snapshot {
  std::vector<ThreadSample> threads;
  std::vector<pid_t> pids;
  bool busy = false;
  bool operator==(const Snapshot& o) const { return threads == o.threads && pids == o.pids; }
};

bool running_state(char s) {
  // R running/runnable, D uninterruptible (I/O in progress: it will finish by itself),
  // T/t stopped (a debugger or SIGSTOP holds the clock), W paging.
  return s == 'R' || s == 'D' || s == 'T' || s == 't' || s == 'W';
}

const char* syscall_name(long nr) {
  switch (nr) {
    case 0: return "read";
    case 1: return "write";
    case 7: return "poll";
    case 23: return "select";
    case 34: return "pause";
    case 35: return "nanosleep";
    case 43: return "accept";
    case 45: return "recvfrom";
    case 47: return "recvmsg";
    case 61: return "wait4";
    case 130: return "rt_sigsuspend";
    case 128: return "rt_sigtimedwait";
    case 202: return "futex";
    case 230: return "clock_nanosleep";
    case 232: return "epoll_wait";
    case 247: return "waitid";
    case 270: return "pselect6";
    case 271: return "ppoll";
    case 281: return "epoll_pwait";
    case 288: return "accept4";
    case 441: return "epoll_pwait2";
    default: return nullptr;
  }
}

}  // namespace

struct Controller::Impl {
  Session& session;
  abi::Segment& seg;
  pid_t root;
  ProcReader proc;
  ControllerStats stats;
  bool watch_self = false;

  Impl(Session& s, pid_t r) : session(s), seg(s.segment()), root(r) {}

  // Frees the process slots of dead or zombie processes and every slot they owned.
  void reclaim_processes() {
    for (auto& p : seg.processes) {
      if (p.state.load(std::memory_order_acquire) != 1) continue;
      pid_t pid = p.pid.load();
      uint64_t start = 0;
      char st = ProcReader::process_state(pid, &start);
      uint64_t want = p.start_time.load();
      bool dead = st == 0 || st == 'Z' || st == 'X' || (want != 0 && start != want);
      if (!dead) continue;
      VTIME_LOGF("controller", LogLevel::kDebug, "process %d is gone (state %c): reclaiming its slots", pid, st ? st : '-');
      p.state.store(0, std::memory_order_release);
      for (auto& w : seg.waiters) {
        if (w.state.load(std::memory_order_acquire) != abi::kFree && w.pid.load() == pid) {
          VTIME_LOGF("controller", LogLevel::kDebug, "  slot %d (tid %d, state %u, deadline %lld) freed",
                     static_cast<int>(&w - seg.waiters), w.tid.load(), w.state.load(),
                     static_cast<long long>(w.deadline.load()));
          detail::free_slot(w);
        }
      }
    }
  }

  std::vector<pid_t> pids() {
    std::unordered_set<pid_t> roots{root};
    for (auto& p : seg.processes) {
      if (p.state.load(std::memory_order_acquire) != 0) roots.insert(p.pid.load());
    }
    std::vector<pid_t> all(roots.begin(), roots.end());
    for (pid_t d : proc.descendants(roots)) all.push_back(d);
    std::sort(all.begin(), all.end());
    return all;
  }

  Snapshot scan() {
    ++stats.scans;
    Snapshot snap;
    reclaim_processes();
    std::unordered_set<pid_t> tids;
    for (auto& p : seg.processes) {
      if (p.state.load(std::memory_order_acquire) == 2) snap.busy = true;  // registering
    }
    snap.pids = pids();
    for (pid_t pid : snap.pids) proc.sample_threads(pid, snap.threads);
    if (watch_self) {
      // The controller's own process: every thread but the one running this scan.
      size_t first = snap.threads.size();
      proc.sample_threads(getpid(), snap.threads);
      pid_t me = detail::gettid_raw();
      snap.threads.erase(std::remove_if(snap.threads.begin() + static_cast<long>(first), snap.threads.end(),
                                        [&](const ThreadSample& t) { return t.tid == me; }),
                         snap.threads.end());
    }
    for (auto& t : snap.threads) {
      tids.insert(t.tid);
      if (running_state(t.state) || t.running) snap.busy = true;
    }
    proc.prune(tids);
    // A thread slot whose thread is gone can never be consumed; a woken one means a wake-up the
    // tree has not handled yet.
    for (auto& w : seg.waiters) {
      uint32_t st = w.state.load(std::memory_order_acquire);
      if (st != abi::kWaiting && st != abi::kWoken) continue;
      if (!w.is_timer.load() && !tids.count(w.tid.load())) {
        // Not in this scan's thread list: either gone, or created after the list was read
        // (then the tree is not idle anyway). Only the kernel can tell which.
        char path[96];
        snprintf(path, sizeof path, "/proc/%d/task/%d", w.pid.load(), w.tid.load());
        if (access(path, F_OK) == 0) {
          snap.busy = true;
          continue;
        }
        VTIME_LOGF("controller", LogLevel::kDebug, "thread %d (pid %d) is gone: freeing slot %d",
                   w.tid.load(), w.pid.load(), static_cast<int>(&w - seg.waiters));
        detail::free_slot(w);
        continue;
      }
      if (st == abi::kWoken) snap.busy = true;
    }
    std::sort(snap.threads.begin(), snap.threads.end(),
              [](const ThreadSample& a, const ThreadSample& b) { return a.tid < b.tid; });
    return snap;
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

Controller::Controller(Session& session, pid_t root) : impl_(std::make_unique<Impl>(session, root)) {}
Controller::~Controller() = default;

IdleResult Controller::wait_idle(const std::function<bool()>& interrupted) {
  Impl& m = *impl_;
  auto& h = m.seg.header;
  Snapshot prev;
  bool have_prev = false;
  uint64_t prev_activity = 0;
  int busy_rounds = 0;
  for (;;) {
    if (interrupted && interrupted()) return IdleResult::kInterrupted;
    uint64_t a1 = h.activity.load(std::memory_order_seq_cst);
    Snapshot snap = m.scan();
    uint64_t a2 = h.activity.load(std::memory_order_seq_cst);
    if (snap.busy || a1 != a2) {
      have_prev = false;
      ++busy_rounds;
      if (busy_rounds < 4) {
        sched_yield();  // the usual case: a thread about to block finishes doing so
      } else {
        long budget = std::min<long>(2000, 20L << std::min(busy_rounds - 4, 7));
        m.wait_activity(a2, budget);
      }
      continue;
    }
    if (have_prev && prev_activity == a2 && snap == prev) {
      ++m.stats.idle_decisions;
      return IdleResult::kIdle;
    }
    prev = std::move(snap);
    prev_activity = a2;
    have_prev = true;
  }
}

std::optional<TimePoint> Controller::next_deadline() {
  int64_t best = abi::kNoDeadline;
  for (auto& w : impl_->seg.waiters) {
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    best = std::min(best, w.deadline.load(std::memory_order_relaxed));
  }
  if (best == abi::kNoDeadline) return std::nullopt;
  return TimePoint::from_ns(best);
}

namespace {

// The clock's only writer: a seqlock write of (now, real base, rate).
void write_clock(abi::ClockState& c, TimePoint now, int64_t rate_ppm) {
  uint64_t s = c.seq.load(std::memory_order_relaxed);
  c.seq.store(s + 1, std::memory_order_relaxed);
  // Release stores: a reader that sees new data also sees the odd seq written before it.
  c.now_ns.store(now.ns(), std::memory_order_release);
  c.real_base_ns.store(real_monotonic_ns(), std::memory_order_release);
  c.rate_ppm.store(rate_ppm, std::memory_order_release);
  c.seq.store(s + 2, std::memory_order_release);
}

}  // namespace

void Controller::set_now(TimePoint t) {
  auto& c = impl_->seg.header.clock;
  TimePoint cur = Session::read_clock(c);
  if (t > cur) write_clock(c, t, c.rate_ppm.load(std::memory_order_relaxed));
}

void Controller::set_rate(double factor) {
  auto& c = impl_->seg.header.clock;
  write_clock(c, Session::read_clock(c), static_cast<int64_t>(factor * 1e6));
}

void Controller::watch_own_threads(bool on) { impl_->watch_self = on; }

int Controller::advance_to(TimePoint t) {
  Impl& m = *impl_;
  auto& h = m.seg.header;
  set_now(t);
  struct Due {
    int64_t deadline;
    uint64_t seq;
    uint32_t index;
  };
  std::vector<Due> due;
  for (uint32_t i = 0; i < abi::kWaiterSlots; ++i) {
    auto& w = m.seg.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (d <= t.ns()) due.push_back({d, w.seq.load(std::memory_order_relaxed), i});
  }
  std::sort(due.begin(), due.end(), [](const Due& a, const Due& b) {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.seq < b.seq;
  });
  int woken = 0;
  VTIME_LOGF("controller", LogLevel::kDebug, "advance to %lld: %zu due", static_cast<long long>(t.ns()), due.size());
  for (const Due& d : due) {
    auto& w = m.seg.waiters[d.index];
    uint32_t expected = abi::kWaiting;
    if (!w.state.compare_exchange_strong(expected, abi::kWoken, std::memory_order_acq_rel)) continue;
    ++woken;
    if (w.wake_kind.load() == abi::kWakeAgent) {
      uint32_t pi = w.process.load();
      if (pi < abi::kProcessSlots) {
        auto& p = m.seg.processes[pi];
        p.agent_word.fetch_add(1, std::memory_order_acq_rel);
        detail::futex_wake(&p.agent_word, 1);
      }
    } else {
      w.word.fetch_add(1, std::memory_order_acq_rel);
      detail::futex_wake(&w.word, 1);
    }
  }
  h.advances.fetch_add(1, std::memory_order_relaxed);
  h.wakeups.fetch_add(static_cast<uint64_t>(woken), std::memory_order_relaxed);
  ++m.stats.advances;
  m.stats.wakeups += static_cast<uint64_t>(woken);
  return woken;
}

std::vector<pid_t> Controller::tree_pids() { return impl_->pids(); }

ControllerStats Controller::stats() const { return impl_->stats; }

std::vector<ThreadReport> Controller::describe() {
  Impl& m = *impl_;
  std::vector<ThreadReport> out;
  for (pid_t pid : m.pids()) {
    std::vector<ThreadSample> threads;
    m.proc.sample_threads(pid, threads);
    for (auto& t : threads) {
      ThreadReport r;
      r.pid = pid;
      r.tid = t.tid;
      r.state = t.state;
      char path[96];
      snprintf(path, sizeof path, "/proc/%d/task/%d/comm", static_cast<int>(pid), static_cast<int>(t.tid));
      r.comm = ProcReader::read_small(path);
      if (!r.comm.empty() && r.comm.back() == '\n') r.comm.pop_back();
      for (auto& w : m.seg.waiters) {
        uint32_t st = w.state.load();
        if ((st != abi::kWaiting && st != abi::kWoken) || w.is_timer.load() || w.tid.load() != t.tid) continue;
        int64_t d = w.deadline.load();
        char buf[160];
        if (d == abi::kNoDeadline) {
          snprintf(buf, sizeof buf, "%s with no timeout", reason_name(w.reason.load()));
        } else {
          snprintf(buf, sizeof buf, "%s until virtual %" PRId64 ".%09" PRId64 " s", reason_name(w.reason.load()),
                   d / 1000000000, d % 1000000000);
        }
        r.waits_on = buf;
      }
      if (r.waits_on.empty()) {
        // The sample already read /proc/.../syscall.
        long nr = t.syscall_nr;
        const char* name = syscall_name(nr);
        if (t.state == 'Z') r.waits_on = "exited (zombie)";
        else if (t.running) r.waits_on = "running";
        else if (name) r.waits_on = std::string(name) + " (blocking call, no virtual timeout)";
        else if (nr >= 0) r.waits_on = "system call " + std::to_string(nr) + " (no virtual timeout)";
        else r.waits_on = "unknown";
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace vtime
