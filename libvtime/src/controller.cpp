// Idle detection and clock advances (see controller.h).
#include <vtime/controller.h>

#include <vtime/log.h>
#include <vtime/tree_watch.h>

#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/proc_reader.h>

#include "go_sysmon.h"
#include "turn_order.h"
#include "tree_report.h"
#include "waiter_kinds.h"
#include "proc_stat.h"
#include "tsc_clock.h"

#include <sched.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <signal.h>

#include <algorithm>
#include <cinttypes>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace vtime {

using detail::ProcReader;
using detail::ProcessStatus;
using detail::ThreadSample;
using detail::TscCalibration;

std::string to_string(const ThreadReport& t) {
  return "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " (" + t.comm + ") [" +
         std::string(1, t.state) + "]: " + t.waits_on;
}

const char* reason_name(uint32_t reason) {
  static const char* names[] = {"wait", "sleep", "poll", "select", "epoll_wait", "condition variable",
                                "semaphore", "mutex", "rwlock", "futex", "join", "sigtimedwait",
                                "POSIX timer", "timerfd", "alarm/itimer", "CPU time (--cpu-model calls)"};
  static_assert(sizeof names / sizeof names[0] == abi::kReasonCount);
  return reason < abi::kReasonCount ? names[reason] : "wait";
}

namespace {

// Clock reads made so far by the live threads of the tree (abi::ThreadStat): a tree that reads
// the clock in a loop while it stands still is busy-waiting on it.
uint64_t live_clock_reads(abi::Segment& seg) {
  uint64_t n = 0;
  for (auto& t : seg.thread_stats) {
    if (t.state.load(std::memory_order_acquire) == 1) n += t.reads.load(std::memory_order_relaxed);
  }
  return n;
}

// utime and stime (clock ticks) of one thread, from /proc/PID/task/TID/stat; false if gone.
bool thread_cpu_times(pid_t pid, pid_t tid, uint64_t* utime, uint64_t* stime) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", static_cast<int>(pid), static_cast<int>(tid));
  std::string line = ProcReader::read_small(path);
  const char* c = detail::proc_stat_field(line.c_str(), 14);
  if (!c || !*c) return false;
  char* end = nullptr;
  *utime = strtoull(c, &end, 10);  // field 14, then field 15
  *stime = strtoull(end, nullptr, 10);
  return true;
}

// The controller's way out of abi::kWaking: false when the owner changed the slot meanwhile (it
// ended or re-armed its wait), which then stays as the owner left it.
bool finish_waking(abi::WaiterSlot& w, abi::SlotState to) {
  uint32_t waking = abi::kWaking;
  return w.state.compare_exchange_strong(waking, to, std::memory_order_seq_cst);
}

using detail::housekeeping;
using detail::parse_syscall_line;
using detail::SyscallLine;

// Earliest deadline among pending (Waiting) slots. Housekeeping waits count only when nothing
// else is pending: Go's runtime decides between its short and its long sleeps by racing its own
// threads, so a deadline of theirs is not a deterministic instant to stop at; they are woken
// with the next advance instead (advance()), which no Go program can tell from a slow kernel.
std::optional<TimePoint> earliest_deadline(abi::Segment& seg) {
  int64_t best = abi::kNoDeadline, best_housekeeping = abi::kNoDeadline;
  for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
    auto& w = seg.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (housekeeping(w)) {
      best_housekeeping = std::min(best_housekeeping, d);
    } else {
      best = std::min(best, d);
    }
  }
  if (best == abi::kNoDeadline) best = best_housekeeping;
  if (best == abi::kNoDeadline) return std::nullopt;
  return TimePoint::from_ns(best);
}

// What the waiting side and the tracer publish in the header, read at both ends of an idle
// decision: the activity counter (every wait entry, exit and registration) and the tracer's reap
// counter (abi::Header::tracer_reaps, odd while it takes an exit). A decision holds when both ends
// read the same marks and no reap was under way.
struct Marks {
  uint64_t activity = 0;
  uint32_t reaps = 0;
  static Marks read(const abi::Header& h) {
    return {h.activity.load(std::memory_order_seq_cst), h.tracer_reaps.load(std::memory_order_seq_cst)};
  }
  bool settled() const { return (reaps & 1) == 0; }
  bool operator==(const Marks&) const = default;
};

struct Snapshot {
  std::vector<ThreadSample> threads;
  std::vector<pid_t> pids;
  bool busy = false;
  uint32_t unconsumed = 0;  // Woken slots: wake-ups the tree has not handled yet
  bool operator==(const Snapshot& o) const { return threads == o.threads && pids == o.pids; }
};

bool running_state(char s) {
  // R running/runnable, D uninterruptible (I/O in progress: it will finish by itself),
  // T/t stopped (a debugger or SIGSTOP holds the clock), W paging.
  return s == 'R' || s == 'D' || s == 'T' || s == 't' || s == 'W';
}

// Proofs: how a decision avoids the three /proc reads for threads known to wait in our code.
//
// The general rule reads stat, schedstat and syscall of every thread in both scans of a
// decision. Three kinds of threads are proven blocked more cheaply. A proof made at time V lets
// the candidate scan skip the thread entirely; the confirming scan re-checks it (below). When
// the check passes, the thread ran no user code since V and so woke nobody: the decision treats
// it like a thread whose counters did not change. Proven threads are read first: a thread that a
// proven one could have woken before its own read is then read after it, and one woken after
// its read by another thread of the tree is caught through that thread (its counters moved
// between the two scans, and so on back to a cause outside the tree, which no scan can see).
//
// Futex proofs (sleepers and agents). A "sleeper" is a thread whose only pending wait is one
// thread slot in state Waiting with kWakeFutex: it blocks in sleep_on() on its process's sleep
// word (abi::ProcessSlot) until the controller (or, for a rwlock, an unlocking thread of its
// process) bumps its slot's word and wakes its bit. An agent (its tid published in its
// ProcessSlot) blocks in wait_word() on agent_word, where no other task ever waits. The check:
// the task is queued on its word (an agent: futex_waiters() finds exactly one task there; the
// sleepers of a process: as many tasks queued on the sleep word as the scan counted sleepers,
// see sleepers_queued()), then the thread's state letter is not running, then the slot (seq,
// word) or agent word is still the same. Between V and that check the thread can only have left
// its futex call for: a wake-up of its own (its slot is Woken or its slot word moved: seen); the
// 1 s heartbeat, a spurious return or another slot's bit (the wait loop re-queues it without
// running user code or waking anyone); a signal, whose handler is user code: the wait returns
// EINTR and ends (the slot leaves Waiting; a new wait has a new seq), while the handler runs the
// state is 'R', and a handler that blocks leaves the futex queue. The state
// letter is read because a wake-up sent to a task on another cpu is queued until that cpu takes
// its interrupt (TASK_WAKING): meanwhile a signalled task is still queued on the futex and its
// syscall line is unchanged, but stat already says 'R'. A thread stopped alone by a debugger
// ('t') or with its process ('T') reads as running, which holds the clock.
//
// Tagged proofs (fd waits). A thread in an intercepted fd wait (poll/ppoll/epoll families, with
// or without a virtual timeout, once in the real call) blocks in ppoll or epoll_pwait with no
// signal mask and abi::kTaggedWaitMark | its slot's seq in the ignored mask-size argument
// (fd_wait.h). The seq is unique in the session and the scope makes one such call, so a
// /proc/TID/syscall line naming it is that wait's own call, and two equal reads (the kernel
// answers only once the task is off the cpu and not runnable) saw the thread inside one and the
// same call: leaving it for any reason makes the wait end (new seq). A kernel-internal wake-up
// that finds nothing ready goes back to sleep inside the call without running user code. The
// state letter is read as for futex proofs. A new proof counts only once a later read shows the
// same line (its new id makes the scan differ from every earlier one).
//
// Kernel count (TreeWatch, where the kernel lets us load its program). The program keeps, for the
// tree only, the number of threads that are on a cpu, queued for one, or being woken, and a
// generation that moves with every change of that number (libvtime/bpf/tree_watch.bpf.c says
// exactly when a thread counts). A decision reads (generation, count), then the waiter and
// process tables, then (generation, count) again: both counts zero and one generation mean that
// for the whole look no thread of the tree ran or was queued, so nothing in the tree could change
// a table or wake anything, and the tables read are the idle state. The /proc rule's two scans
// exist to see a thread run between reads; the generation sees every such run. What the tables
// still decide: a Woken slot (a wake-up of ours not yet handled: its thread is already counted
// from the wake-up on, but the slot is checked as in the /proc rule), a process slot being filled
// in, and slots of threads that died (looked for in /proc only when the program counted an exit).
// Membership is by descent from the root, so a registered process the program does not watch
// (it cannot happen through fork, but a process could attach by other means) sends the session
// back to the /proc rule for good, as does a thread the program could not track.
// The broker's own threads (watch_own_threads) are not in the tree: they are read from /proc as
// before, twice per look, and must show the same counters both times.
// Like the /proc rule, the count cannot see a wake-up that a cause outside the tree has decided
// but not begun (a signal sent from outside, a packet the kernel defers to ksoftirqd).
enum class ProofKind : uint8_t { kSleeper, kTagged, kAgent };

struct SleeperProof {
  ProofKind kind = ProofKind::kSleeper;
  uint32_t slot = 0;  // waiter slot, or process slot for an agent
  uint64_t seq = 0;   // the wait's seq (0 for an agent)
  uint32_t word = 0;
  uint64_t id = 0;  // unique per proof: a sample names the proof it relies on
  std::string line;
};

// A tagged fd wait of the wait numbered `seq` (see above): ppoll(fds, n, tmo, NULL, tag) or
// epoll_pwait(epfd, events, max, timeout, NULL, tag).
bool is_tagged_wait(const char* line, uint64_t seq) {
  SyscallLine call;
  if (!parse_syscall_line(line, call)) return false;
  int mask_arg;
  if (call.nr == SYS_futex) {
    // The tracer's forms of a timed futex wait and of a sleep (tracer/timed_call.h): tag in
    // uaddr2; no timeout, or for a direct sleep the tracer's `forever`.
    return call.a[4] == (abi::kTaggedWaitMark | seq);
  }
  if (call.nr == SYS_ppoll) {
    mask_arg = 3;
  } else if (call.nr == SYS_epoll_pwait) {
    mask_arg = 4;
  } else {
    return false;
  }
  return call.a[mask_arg] == 0 && call.a[mask_arg + 1] == (abi::kTaggedWaitMark | seq);
}

}  // namespace

struct Controller::Impl {
  Session& session;
  abi::Segment& seg;
  pid_t root;
  ProcReader proc;
  detail::GoSysmon sysmon{seg, proc};  // Go's sysmon sleeps (go_sysmon.h)
  ControllerStats stats;
  bool watch_self = false;
  std::unordered_map<pid_t, SleeperProof> proofs;  // by tid
  uint64_t last_proof_id = 0;
  uint64_t last_forks = 0;      // the fork counter as the last scan that read it found it (see scan)
  bool last_scan_busy = true;   // the last scan found the tree busy (or there was none)

  // The kernel count, when the watch adopted this root (see "Kernel count").
  TreeWatch* watch = nullptr;
  uint64_t reclaimed_exits = ~0ull;        // the exit count at the last look for dead threads
  std::unordered_set<pid_t> watched_pids;  // registered processes the watch is known to cover
  std::vector<ThreadSample> own_before;    // the broker's own threads at the start of a look
  // drop_ended_tracer_waits: the count's generation and the marks when a pass found nothing that
  // could change before the tree runs again (see there); none yet.
  std::optional<std::pair<uint64_t, Marks>> tracer_waits_checked;
  // Sleeps of traced images that the controller answers itself (abi::kTracerNotify).
  detail::NotifiedSleeps notify{seg};

  // The CPU-time model (vtime/cpu_model.h): the controller lets the clock run while the tree
  // computes (real; calls past the busy limit) and says so when time stands still too long.
  CpuModelOptions cpu{.model = abi::kCpuZero};
  int64_t busy_since = 0;       // real ns when the current busy stretch of wait_idle began, 0 none
  int64_t busy_clock = 0;       // the virtual now then
  std::optional<uint64_t> busy_reads;  // live_clock_reads half-way to the warning, none before
  // calls: per-thread (utime, stime) at the start of the current window of the busy limit.
  std::map<pid_t, std::pair<uint64_t, uint64_t>> spin_sample;
  int64_t spin_sample_at = 0;     // real ns of that sample, 0 none
  int64_t next_flow_check = 0;  // real ns of the next look for deadlines passed while flowing
  bool flowing = false;         // the clock runs because of the model
  bool warned = false;          // the "time stands still" warning was printed (once per session)
  TscCalibration tsc;           // the running clock's counter (tsc_clock.h)
  int64_t next_tsc_write = 0;   // real ns of the next rewrite of a running clock (on_busy)

  Impl(Session& s, pid_t r, TreeWatch* w) : session(s), seg(s.segment()), root(r) {
    if (w && r > 0 && w->watches(r)) {
      watch = w;
    } else if (w) {
      VTIME_LOGF("controller", LogLevel::kInfo, "the tree watch did not adopt pid %d: idle decisions read /proc", r);
    }
  }

  // The /proc rule's own confirmation (two scans with nothing between them), asked while the
  // kernel count still decides: true when it sees the whole tree asleep.
  bool proc_sees_tree_asleep() {
    const Marks m1 = Marks::read(seg.header);
    if (!m1.settled()) return false;
    Snapshot first = scan(false, m1.activity);
    if (first.busy) return false;
    Snapshot second = scan(true, m1.activity);
    return !second.busy && second == first && Marks::read(seg.header) == m1;
  }

  void give_up_kernel_count(const char* why, LogLevel level = LogLevel::kWarn) {
    // Images patched from now on keep their sleeps with the tracer: a notification does not wake
    // the /proc rule's waits (it is still taken at every look).
    seg.header.notify_sleeps.store(2, std::memory_order_release);
    // Events the kernel dropped because they came while the same program ran on their cpu (an
    // interrupt inside it) leave the count wrong: say whether there were any (docs/shim.md).
    VTIME_LOGF("controller", level, "%s (the kernel skipped %llu of the count's program runs): idle decisions read /proc from now on",
               why, static_cast<unsigned long long>(watch ? watch->misses() : 0));
    watch = nullptr;
  }

  // The controller's own process's threads but the one calling (watch_own_threads), listed with
  // the fork counter `forks`. false when they cannot be listed.
  bool own_thread_ids(uint64_t forks, std::vector<pid_t>& out) {
    pid_t self = getpid();
    pid_t me = detail::gettid_raw();
    ProcessStatus ps;
    if (!proc.process_status(self, ps) || !proc.thread_ids(self, forks, ps.threads, out)) return false;
    std::erase(out, me);
    return true;
  }

  // Frees waiter slot i, a thread's, when its thread no longer exists (it can never be consumed).
  // false when the thread is still there.
  bool free_if_thread_gone(uint32_t i) {
    auto& w = seg.waiters[i];
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d", w.pid.load(), w.tid.load());
    if (access(path, F_OK) == 0) return false;
    VTIME_LOGF("controller", LogLevel::kDebug, "thread %d (pid %d) is gone: freeing slot %d", w.tid.load(), w.pid.load(),
               static_cast<int>(i));
    detail::free_slot(w);
    return true;
  }

  // The broker's own threads but the caller, each sampled in full; false if one runs.
  bool sample_own_threads(std::vector<ThreadSample>& out) {
    out.clear();
    pid_t self = getpid();
    std::vector<pid_t> ids;
    if (!own_thread_ids(proc.forks(), ids)) return true;
    for (pid_t tid : ids) {
      ThreadSample t;
      if (!proc.sample(self, tid, t)) continue;
      if (running_state(t.state) || t.running) return false;
      out.push_back(t);
    }
    return true;
  }

  // After the program counted exits: frees the slots of dead processes and threads, as a /proc
  // scan does when it finds them missing.
  void reclaim_dead() {
    live_roots(nullptr, nullptr);
    for (auto it = watched_pids.begin(); it != watched_pids.end();) {
      it = kill(*it, 0) == 0 || errno != ESRCH ? std::next(it) : watched_pids.erase(it);
    }
    for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
      auto& w = seg.waiters[i];
      uint32_t st = w.state.load(std::memory_order_acquire);
      if ((st != abi::kWaiting && st != abi::kWoken) || w.is_timer.load() != 0) continue;
      free_if_thread_gone(i);
    }
  }

  // One look with the kernel count (see "Kernel count"). Returns true when the tree is idle;
  // otherwise *busy_active says whether threads of the tree were active (the program then
  // signals their end), *unconsumed counts our wake-ups not handled yet.
  bool kernel_look(bool* busy_active, uint32_t* unconsumed) {
    ++stats.scans;
    auto& h = seg.header;
    *busy_active = false;
    *unconsumed = 0;
    const Marks m1 = Marks::read(h);
    if (!m1.settled()) return false;  // the tracer is taking an exit: a parent may be about to wake
    TreeWatch::Counts c1 = watch->counts();
    if (!c1.complete) {
      give_up_kernel_count("a thread of the tree could not be tracked by the kernel count");
      return false;
    }
    if (c1.active != 0) {
      *busy_active = true;
      return false;
    }
    // Sleeps notified so far get their slots (notify_sleeps.h). Only now that no thread is active:
    // a thread that notified is blocked, so the look after an advance, which finds the woken one
    // running, does not ask. A sleep notified after this comes from a thread that ran since c1,
    // which the generation below sees.
    notify.take(watch);
    if (watch_self && !sample_own_threads(own_before)) return false;
    if (c1.exits != reclaimed_exits) {
      // A traced process that exited is reported to the tracer before its parent: until the
      // tracer has reaped it, the parent (or vtime) cannot, and the tree is not done with it.
      // The count saw it die; only /proc says whether it is still a traced zombie.
      if (h.traced.load(std::memory_order_acquire) != 0) {
        for (pid_t pid : pids()) {
          if (proc.thread_state(pid, pid) == 'Z' && traced_zombie(pid)) return false;
        }
      }
      if (root_exiting()) return false;
      reclaim_dead();
      notify.threads_exited();
      reclaimed_exits = c1.exits;
    }
    for (uint32_t i = 0, n = detail::process_limit(seg); i < n; ++i) {
      auto& p = seg.processes[i];
      uint32_t st = p.state.load(std::memory_order_acquire);
      if (st == abi::kProcessFilling) return false;
      if (st != abi::kProcessLive) continue;
      pid_t pid = p.pid.load();
      if (watched_pids.count(pid)) continue;
      if (!watch->watches(pid)) {
        if (kill(pid, 0) != 0 && errno == ESRCH) {
          // Gone (killed from outside and reaped since its slot was read): not a sign of a
          // process outside the tree. Not idle now; the next look reclaims its slot.
          reclaimed_exits = ~0ull;
          return false;
        }
        char why[96];
        snprintf(why, sizeof why, "registered process %d is not a descendant the kernel count watches", pid);
        give_up_kernel_count(why);
        return false;
      }
      watched_pids.insert(pid);
    }
    bool quiet = true;
    for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
      if (seg.waiters[i].state.load(std::memory_order_acquire) == abi::kWoken) {
        quiet = false;
        ++*unconsumed;
      }
    }
    if (!quiet || trace_request_pending()) return false;
    if (watch_self) {
      std::vector<ThreadSample> own_after;
      if (!sample_own_threads(own_after) || own_before != own_after) return false;
    }
    TreeWatch::Counts c2 = watch->counts();
    const Marks m2 = Marks::read(h);
    if (c2.active != 0) *busy_active = true;
    return c2.active == 0 && c2.generation == c1.generation && m2 == m1;
  }

  // Frees process slot p (its process `pid` is dead or a zombie) and every slot it owned.
  void reclaim(abi::ProcessSlot& p, pid_t pid, char st) {
    VTIME_LOGF("controller", LogLevel::kDebug, "process %d is gone (state %c): reclaiming its slots", pid, st ? st : '-');
    p.state.store(abi::kProcessFree, std::memory_order_release);
    for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
      auto& w = seg.waiters[i];
      if (w.state.load(std::memory_order_acquire) != abi::kFree && w.pid.load() == pid) {
        VTIME_LOGF("controller", LogLevel::kDebug, "  slot %d (tid %d, state %u, deadline %lld) freed",
                   static_cast<int>(&w - seg.waiters), w.tid.load(), w.state.load(),
                   static_cast<long long>(w.deadline.load()));
        detail::free_slot(w);
      }
    }
  }

  // Reclaims dead registered processes; returns the live ones (status in *status) plus the root,
  // and sets *registering when a process slot is being filled in.
  std::unordered_set<pid_t> live_roots(std::unordered_map<pid_t, ProcessStatus>* status, bool* registering) {
    std::unordered_set<pid_t> roots{root};
    for (uint32_t i = 0, n = detail::process_limit(seg); i < n; ++i) {
      auto& p = seg.processes[i];
      uint32_t st = p.state.load(std::memory_order_acquire);
      if (st == abi::kProcessFree) continue;
      pid_t pid = p.pid.load();
      if (st == abi::kProcessFilling) {  // not idle, and its pid may not be written yet
        if (registering) *registering = true;
        roots.insert(pid);
        continue;
      }
      ProcessStatus ps;
      bool alive = proc.process_status(pid, ps);
      uint64_t want = p.start_time.load();
      if (!alive || ps.state == 'Z' || ps.state == 'X' || (want != 0 && ps.start_time != want)) {
        reclaim(p, pid, alive ? ps.state : 0);
        continue;
      }
      roots.insert(pid);
      if (status) (*status)[pid] = ps;
    }
    return roots;
  }

  std::vector<pid_t> pids() {
    std::unordered_set<pid_t> roots = live_roots(nullptr, nullptr);
    std::vector<pid_t> all(roots.begin(), roots.end());
    for (pid_t d : proc.descendants(roots)) all.push_back(d);
    std::sort(all.begin(), all.end());
    return all;
  }

  // True when thread `tid` of `pid`, found waiting in `ref` (a waiter slot read as (Waiting,
  // seq, word), or for an agent its process slot and agent_word), is proven blocked in that
  // wait for this scan (see "Futex proofs (sleepers and agents)" and "Tagged proofs (fd waits)"
  // above).
  // `confirming`: the scan may end a decision, so an existing proof must be re-read.
  bool proven_sleeper(pid_t pid, pid_t tid, const SleeperProof& ref, bool confirming, uint64_t* proof_id) {
    auto same_wait = [&] {
      if (ref.kind == ProofKind::kAgent) {
        auto& p = seg.processes[ref.slot];
        return p.agent_word.load(std::memory_order_acquire) == ref.word &&
               p.agent_tid.load(std::memory_order_acquire) == tid;
      }
      auto& w = seg.waiters[ref.slot];
      return w.state.load(std::memory_order_acquire) == abi::kWaiting && w.seq.load(std::memory_order_acquire) == ref.seq &&
             w.word.load(std::memory_order_acquire) == ref.word && w.tid.load(std::memory_order_relaxed) == tid;
    };
    auto it = proofs.find(tid);
    bool known = it != proofs.end() && it->second.kind == ref.kind && it->second.slot == ref.slot &&
                 it->second.seq == ref.seq && it->second.word == ref.word;
    if (known && !confirming) {
      *proof_id = it->second.id;
      return true;
    }
    if (ref.kind != ProofKind::kTagged) {
      // Futex waits (sleepers, agents): see "Futex proofs" above. Queued on the word now, the
      // state letter not running (a signal's wake-up in flight leaves the task queued but reads
      // 'R'), and the same wait after both reads.
      bool queued = ref.kind == ProofKind::kAgent
                        ? detail::futex_waiters(&seg.processes[ref.slot].agent_word, ref.word) == 1
                        : sleepers_queued(seg.waiters[ref.slot].process.load(std::memory_order_relaxed));
      char st = 0;
      bool ok = queued && (st = proc.thread_state(pid, tid)) != 0 && !running_state(st) && same_wait();
      if (ok && known) {
        *proof_id = it->second.id;
        return true;
      }
      if (it != proofs.end()) proofs.erase(it);
      if (!ok) return false;
      *proof_id = ++last_proof_id;
      SleeperProof p = ref;
      p.id = *proof_id;
      proofs.emplace(tid, std::move(p));
      return true;
    }
    char line[256];
    int n = proc.syscall_line(pid, tid, line, sizeof line - 1);
    if (known) {
      // The same call as when the proof was made, still blocked, and still the same wait (read
      // after the line: a wait that ended and a new one begun in between has another seq).
      // The state letter is read too: a wake-up in flight to another cpu leaves the old line in
      // place until that cpu runs the task, but already reads 'R' there (TASK_WAKING).
      char st = 0;
      if (n > 0 && it->second.line.size() == static_cast<size_t>(n) && memcmp(it->second.line.data(), line, n) == 0 &&
          (st = proc.thread_state(pid, tid)) != 0 && !running_state(st) && same_wait()) {
        *proof_id = it->second.id;
        return true;
      }
    }
    if (it != proofs.end()) proofs.erase(it);
    // A new proof: it only counts for a decision once a later read shows the same line: its new
    // id makes this scan's sample differ from every earlier one, so only a later scan can end a
    // decision with it.
    if (n <= 0) return false;
    line[n] = 0;
    if (!is_tagged_wait(line, ref.seq) || !same_wait()) return false;
    *proof_id = ++last_proof_id;
    SleeperProof p = ref;
    p.id = *proof_id;
    p.line.assign(line, static_cast<size_t>(n));
    proofs.emplace(tid, std::move(p));
    return true;
  }

  // Sleepers of a process, counted in this scan (threads whose one wait is a Waiting kWakeFutex
  // slot), and whether that many tasks are queued on its sleep word (asked once per scan).
  std::unordered_map<uint32_t, uint32_t> sleeper_count;
  std::unordered_map<uint32_t, bool> queued_cache;

  // True when every sleeper of process slot `pi` is queued on the process's sleep word. Only
  // sleepers ever wait there (in sleep_on, inside their wait), so when the count of queued tasks
  // equals the count of sleepers, each one is queued: in the kernel, in its wait, not in user
  // code. A nested wait (a handler sleeping inside a sleep) is not a sleeper and makes the
  // counts differ: no proof for that process then, only full reads.
  bool sleepers_queued(uint32_t pi) {
    if (pi >= abi::kProcessSlots) return false;
    auto cached = queued_cache.find(pi);
    if (cached != queued_cache.end()) return cached->second;
    auto& word = seg.processes[pi].sleep_word;
    uint32_t v = word.load(std::memory_order_acquire);
    auto n = sleeper_count.find(pi);
    bool ok = n != sleeper_count.end() && detail::futex_waiters(&word, v) == static_cast<long>(n->second);
    queued_cache.emplace(pi, ok);
    return ok;
  }

  // One look at the tree. A busy snapshot may stop early: it is thrown away.
  // `confirming`: this scan may end the decision (the previous one was not busy).
  // `activity`: the activity counter read just before; a scan that sees it move stops.
  Snapshot scan(bool confirming, uint64_t activity) {
    ++stats.scans;
    Snapshot snap;
    auto& h = seg.header;
    // Read before every cache it validates (see ProcReader::forks). Only a confirming scan can
    // end a decision, and it reads the counter afresh; so does every scan after a busy one. The
    // first scan of a decision reuses the value of the last scan. That is safe because a decision
    // needs the confirming scan to equal the one before it: a process or thread that a scan
    // missed through a stale cache makes them differ. Reading afresh after a busy scan is what
    // makes it end: a thread of a stale list that ended, and a new one whose slot names a tid
    // missing from that list, would otherwise make every scan busy.
    if (confirming || last_scan_busy || last_forks == 0) last_forks = proc.forks();
    uint64_t forks = last_forks;
    std::unordered_map<pid_t, ProcessStatus> status;
    std::unordered_set<pid_t> roots = live_roots(&status, &snap.busy);
    std::vector<pid_t> pids(roots.begin(), roots.end());
    for (pid_t d : proc.descendants(roots, forks)) pids.push_back(d);
    std::sort(pids.begin(), pids.end());

    // Every thread of every live process of the tree.
    struct Listed {
      pid_t pid;
      pid_t tid;
    };
    std::vector<Listed> listed;
    std::unordered_set<pid_t> tids;
    std::unordered_set<pid_t> live_pids;
    std::vector<pid_t> ids;
    for (pid_t pid : pids) {
      ProcessStatus ps;
      auto st = status.find(pid);
      if (st != status.end()) {
        ps = st->second;
      } else if (!proc.process_status(pid, ps)) {
        continue;  // gone
      }
      // The leader's own state: a stopped process (SIGSTOP, ^Z) holds the clock even when all
      // its threads are proven sleepers, whose state letters are not read.
      if (running_state(ps.state)) snap.busy = true;
      if (!proc.thread_ids(pid, forks, ps.threads, ids)) continue;
      live_pids.insert(pid);
      snap.pids.push_back(pid);
      for (pid_t tid : ids) {
        listed.push_back({pid, tid});
        tids.insert(tid);
      }
    }
    if (watch_self) {
      // The controller's own process: every thread but the one running this scan.
      pid_t self = getpid();
      if (own_thread_ids(forks, ids)) {
        live_pids.insert(self);
        for (pid_t tid : ids) {
          listed.push_back({self, tid});
          tids.insert(tid);
        }
      }
    }

    // The waiter table. A thread slot whose thread is gone can never be consumed; a woken one
    // means a wake-up the tree has not handled yet. Each thread's single wait, if it has one
    // and nothing else, makes it a candidate for a proof: a sleeper (futex) or a tagged fd wait.
    std::unordered_map<pid_t, int64_t> sleep_slot;  // tid -> slot, or -1: more than one wait
    for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
      auto& w = seg.waiters[i];
      uint32_t st = w.state.load(std::memory_order_acquire);
      if (st != abi::kWaiting && st != abi::kWoken) continue;
      bool timer = w.is_timer.load() != 0;
      pid_t tid = w.tid.load();
      if (!timer && !tids.count(tid)) {
        // Not in this scan's thread list: either gone, or created after the list was read
        // (then the tree is not idle anyway). Only the kernel can tell which.
        if (!free_if_thread_gone(i)) snap.busy = true;
        continue;
      }
      if (st == abi::kWoken) {
        snap.busy = true;
        ++snap.unconsumed;
      }
      if (timer) continue;
      int64_t v = st == abi::kWaiting ? static_cast<int64_t>(i) : -1;
      auto [it, inserted] = sleep_slot.emplace(tid, v);
      if (!inserted) it->second = -1;
    }
    // A thread asking the tracer to take it (trace_request.h) waits in a futex the tables do not
    // show; until the tracer answered and it ran on, the tree is not idle.
    if (trace_request_pending()) snap.busy = true;
    if (snap.busy) return snap;

    // Sleepers per process, for sleepers_queued().
    sleeper_count.clear();
    queued_cache.clear();
    for (auto& [tid, slot] : sleep_slot) {
      if (slot < 0) continue;
      auto& w = seg.waiters[slot];
      if (w.wake_kind.load(std::memory_order_acquire) == abi::kWakeFutex) ++sleeper_count[w.process.load()];
    }

    // Agents: tid -> process slot.
    std::unordered_map<pid_t, uint32_t> agents;
    for (uint32_t i = 0, n = detail::process_limit(seg); i < n; ++i) {
      auto& p = seg.processes[i];
      if (p.state.load(std::memory_order_acquire) != abi::kProcessLive) continue;
      pid_t a = p.agent_tid.load(std::memory_order_acquire);
      if (a > 0 && live_pids.count(p.pid.load())) agents.emplace(a, i);
    }

    // Proven threads first (see "Futex proofs"), then every other thread in full.
    std::vector<Listed> others;
    for (const Listed& l : listed) {
      SleeperProof ref;
      bool candidate = false;
      if (auto a = agents.find(l.tid); a != agents.end()) {
        ref.kind = ProofKind::kAgent;
        ref.slot = a->second;
        ref.word = seg.processes[a->second].agent_word.load(std::memory_order_acquire);
        candidate = true;
      } else if (auto s = sleep_slot.find(l.tid); s != sleep_slot.end() && s->second >= 0) {
        auto& w = seg.waiters[s->second];
        uint32_t kind = w.wake_kind.load(std::memory_order_acquire);
        ref.kind = kind == abi::kWakeFutex ? ProofKind::kSleeper : ProofKind::kTagged;
        ref.slot = static_cast<uint32_t>(s->second);
        ref.seq = w.seq.load(std::memory_order_acquire);
        ref.word = w.word.load(std::memory_order_acquire);
        candidate = w.state.load(std::memory_order_acquire) == abi::kWaiting;
      }
      uint64_t proof_id = 0;
      if (candidate && proven_sleeper(l.pid, l.tid, ref, confirming, &proof_id)) {
        ThreadSample t;
        t.pid = l.pid;
        t.tid = l.tid;
        t.state = 'S';
        t.syscall_nr = ref.kind == ProofKind::kTagged ? -1 : SYS_futex;
        t.wait_seq = ref.seq;
        t.proof = proof_id;
        snap.threads.push_back(t);
        continue;
      }
      others.push_back(l);
    }
    for (size_t k = 0; k < others.size(); ++k) {
      ThreadSample t;
      if (!proc.sample(others[k].pid, others[k].tid, t)) continue;  // gone since the listing
      // A traced process that exited is reported to the tracer before its parent: until the
      // tracer has reaped it, its parent cannot, and the tree is not done with it.
      if (running_state(t.state) || t.running || (t.state == 'Z' && ((t.tid == root && root_exiting()) || traced_zombie(t.tid)))) {
        snap.busy = true;
        return snap;
      }
      snap.threads.push_back(t);
      // Something began or ended a wait: this scan cannot be the last one; stop reading.
      if ((k & 7) == 7 && h.activity.load(std::memory_order_seq_cst) != activity) {
        snap.busy = true;
        return snap;
      }
    }
    // Forget what belongs to threads and processes no longer in the tree.
    if (proofs.size() > tids.size()) {
      for (auto it = proofs.begin(); it != proofs.end();) {
        it = tids.count(it->first) ? std::next(it) : proofs.erase(it);
      }
    }
    proc.prune(tids, live_pids);
    std::sort(snap.threads.begin(), snap.threads.end(),
              [](const ThreadSample& a, const ThreadSample& b) { return a.tid < b.tid; });
    return snap;
  }

  // The root's exit is on its way to the owner, which reaps it (its `interrupted` callback) as
  // soon as the kernel lets it: never a tree blocked forever. The tracer's reaping of a traced
  // root and the owner's wait can interleave so that /proc reads it untraced while the owner's
  // wait does not see it yet (tracer.static_c once reported such a root as blocked forever).
  // (A leader that ended alone reads 'Z' while its other threads run: those count, not it.)
  bool root_exiting() {
    if (proc.thread_state(root, root) != 'Z') return false;
    char path[48];
    snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(root));
    std::string status = ProcReader::read_small(path);
    const char* t = strstr(status.c_str(), "Threads:");
    return t && atoi(t + 8) <= 1;
  }

  bool traced_zombie(pid_t tid) {
    if (seg.header.traced.load(std::memory_order_acquire) == 0) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
    std::string status = ProcReader::read_small(path);
    const char* t = strstr(status.c_str(), "TracerPid:");
    return t && atoi(t + 10) != 0;
  }

  bool trace_request_pending() {
    bool pending = false;
    for (auto& r : seg.header.trace_requests) {
      uint32_t st = r.state.load(std::memory_order_acquire);
      if (st == 0) continue;
      // Being filled in, asked, or answered and not yet taken back. A requester that died
      // meanwhile never takes it back: free it for it.
      char path[48];
      snprintf(path, sizeof path, "/proc/%d", static_cast<int>(r.tid.load(std::memory_order_relaxed)));
      if (st >= 2 && access(path, F_OK) != 0 && errno == ENOENT) {
        r.state.compare_exchange_strong(st, 0, std::memory_order_acq_rel);
        continue;
      }
      pending = true;
    }
    return pending;
  }

  // Waits of the tracer (abi::kWakeTracer) whose thread has left its call: the kernel woke it
  // before the deadline, and the tracer learns that only at the thread's next stop. At an idle
  // point a thread not inside its tagged call has left it for good (a thread stopped for the
  // tracer is never idle): its slot is marked ended (Claimed) so that its deadline no longer
  // counts. The tracer only writes a slot while the thread is stopped, and writes the tagged
  // registers before it makes the slot Waiting, so an idle look never sees a new wait's slot
  // with the old call's line. A timer the tracer emulates (is_timer, tracer/timers.h) is no
  // call and stays. A direct sleep (abi::kTracerDirect) can only be left through a signal, and the
  // tracer ends it itself then. Called at idle points only (next_deadline, advance).
  void drop_ended_tracer_waits() {
    if (seg.header.traced.load(std::memory_order_acquire) == 0) return;
    // Each tagged wait costs a read of /proc/TID/syscall (~4 us: the kernel waits for the thread
    // to be off its cpu), and this runs at the idle decision, for the next deadline and at the
    // advance, three times with nothing run in between. What a pass saw holds until a thread of
    // the tree runs again, and a thread that runs moves the count's generation (it becomes
    // active); the tracer arms a wait only while its thread is stopped, which counts as active
    // too. So with the count, a pass is skipped when the count was zero with the same generation
    // and marks at both ends of the last one and still is.
    const std::optional<std::pair<uint64_t, Marks>> before = quiet_point();
    if (before && before == tracer_waits_checked) return;
    tracer_waits_checked.reset();
    for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
      auto& w = seg.waiters[i];
      if (w.state.load(std::memory_order_acquire) != abi::kWaiting ||
          w.wake_kind.load(std::memory_order_relaxed) != abi::kWakeTracer ||
          (w.tracer_flags.load(std::memory_order_relaxed) & (abi::kTracerExitTracked | abi::kTracerDirect | abi::kTracerNotify)) != 0 ||
          w.is_timer.load() != 0) {
        continue;
      }
      uint64_t seq = w.seq.load(std::memory_order_acquire);
      char line[256];
      int n_read = proc.syscall_line(w.pid.load(), w.tid.load(), line, sizeof line - 1);
      if (n_read > 0) {
        line[n_read] = 0;
        if (is_tagged_wait(line, seq)) continue;
      }
      // Through Waking, as an advance wakes (abi::kWaking): the tracer may have armed its next
      // wait on the slot since the seq was read.
      uint32_t expected = abi::kWaiting;
      if (w.state.compare_exchange_strong(expected, abi::kWaking, std::memory_order_seq_cst)) {
        finish_waking(w, w.seq.load(std::memory_order_acquire) == seq ? abi::kClaimed : abi::kWaiting);
      }
    }
    if (before && quiet_point() == before) tracer_waits_checked = before;
  }

  // Go's sysmon (go_sysmon.h): at an idle point, the sysmon sleeps a Go process's timers wait
  // for end now, at most GoSysmon::kNudgesPerInstant times per instant.
  bool nudge_sysmon() {
    const int64_t now = Session::read_clock(seg.header.clock).ns();
    if (!sysmon.may_nudge(now)) return false;
    bool any = false;
    for (const detail::GoSysmon::Sleep& s : sysmon.needing(abi::kNoDeadline)) {
      auto& w = seg.waiters[s.index];
      uint32_t expected = abi::kWaiting;
      if (!w.state.compare_exchange_strong(expected, abi::kWaking, std::memory_order_seq_cst)) continue;
      const bool same = w.seq.load(std::memory_order_acquire) == s.seq;
      if (same) w.deadline.store(now, std::memory_order_relaxed);
      if (finish_waking(w, abi::kWaiting) && same) any = true;
    }
    if (!any) return false;
    sysmon.nudged();
    ++stats.sysmon_nudges;
    VTIME_LOGF("controller", LogLevel::kDebug, "sysmon nudged at %lld (%d at this instant)", static_cast<long long>(now),
               sysmon.nudges_at_this_instant());
    advance(TimePoint::from_ns(now), seg.header.serial.load(std::memory_order_acquire) != 0, false);
    return true;
  }

  // The deadline an idle point stops at: earliest_deadline, or a sleep of sysmon where it must
  // run for its process's timers and the nudges gave up (go_sysmon.h).
  std::optional<TimePoint> idle_deadline() { return sysmon.idle_deadline(earliest_deadline(seg)); }

  // With the kernel count, while no thread of the tree is active: its generation and the marks.
  // Two equal readings mean no thread of the tree ran between them.
  std::optional<std::pair<uint64_t, Marks>> quiet_point() const {
    if (!watch) return std::nullopt;
    TreeWatch::Counts c = watch->counts();
    if (c.active != 0) return std::nullopt;
    return std::make_pair(c.generation, Marks::read(seg.header));
  }

  // advance_to (one_process false) and advance_step (true).
  int advance(TimePoint t, bool one_process, bool in_stats = true);
  // advance's due waiters, kept between advances: no allocation per advance.
  struct Due {
    int64_t deadline;
    uint64_t seq;
    uint32_t index;
    uint32_t process;
    pid_t pid;
    bool housekeeping;
  };
  std::vector<Due> due_buf;
  std::vector<pid_t> pids_buf;

  // The serial gate's turn order and hand-overs (turn_order.h).
  detail::TurnOrder turns{seg, root, proc};

  // A look of wait_idle found the tree busy: applies the CPU-time model and the warning. Returns
  // how long (us) the caller may wait before looking again.
  long on_busy();
  // wait_idle returns: the busy stretch is over; a clock the model let run stops.
  void end_busy();
  void warn_time_stands_still(int64_t real_now);
  std::vector<ThreadReport> describe();
  // (utime, stime) of every thread of the tree.
  std::map<pid_t, std::pair<uint64_t, uint64_t>> cpu_times();
  // calls: the thread of the tree that computed in user mode, without system calls, for most of
  // the last half busy limit (a spin on memory, CPython's bytecode loop holding the GIL), 0 if
  // none did (the first call starts the window): only such a computation lets the clock run; a
  // program starting up, busy in system calls and page faults, does not.
  pid_t user_mode_spin(int64_t real);
  // Says once per session that the clock began to run with real time because of `spinner`.
  void warn_busy_flow(pid_t spinner, int64_t real_now);

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
  if (r == IdleResult::kIdle) impl_->drop_ended_tracer_waits();
  return r;
}

IdleResult Controller::look_until_idle(const std::function<bool()>& interrupted) {
  Impl& m = *impl_;
  if (m.watch) {
    int busy_rounds = 0;
    int64_t active_since = 0;  // real time since which every look found a thread active
    while (m.watch) {
      if (interrupted && interrupted()) {
        m.end_busy();
        return IdleResult::kInterrupted;
      }
      bool busy_active = false;
      uint32_t unconsumed = 0;
      if (m.kernel_look(&busy_active, &unconsumed)) {
        ++m.stats.idle_decisions;
        m.last_scan_busy = false;
        m.end_busy();
        return IdleResult::kIdle;
      }
      if (!m.watch) break;  // the look gave the kernel count up
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
        if (m.proc_sees_tree_asleep()) {
          m.give_up_kernel_count("the kernel count saw a thread active for 0.5 s while /proc saw every thread asleep");
          break;
        }
      }
      long cap = m.on_busy();
      if (unconsumed >= 16) {
        m.pause_us(std::min<long>(cap, 2L * unconsumed));  // as below: let the woken run first
      } else if (busy_active) {
        // Most waits here are a woken thread's few microseconds of work. Watching the count for a
        // while, giving the cpu to whoever wants it, answers sooner than being woken by the
        // program: an idle vcpu woken from its halt costs tens of microseconds on this kind of
        // virtual machine (kit_10h_80 with periodic_fcfs: 6.1-6.4 s instead of 6.9-7.0 s).
        int64_t until = real_monotonic_ns() + kKernelSpinNs;
        while (m.watch->counts().active != 0 && real_monotonic_ns() < until) sched_yield();
        if (m.watch->counts().active == 0) continue;
        // Then the program says when the count drops to zero; the budget only bounds how long
        // `interrupted` goes unasked.
        // A listener left readable would end every wait at once: its notifications first.
        m.notify.take(m.watch);
        m.watch->wait_quiet(cap);
      } else if (busy_rounds < 4) {
        sched_yield();
      } else {
        m.wait_activity(m.seg.header.activity.load(std::memory_order_seq_cst),
                        std::min<long>(cap, 20L << std::min(busy_rounds - 4, 7)));
      }
    }
    // The kernel count gave up (logged): decide with /proc from here on.
  }
  auto& h = m.seg.header;
  Snapshot prev;
  bool have_prev = false;
  Marks prev_marks;
  int busy_rounds = 0;
  for (;;) {
    if (interrupted && interrupted()) {
      m.end_busy();
      return IdleResult::kInterrupted;
    }
    m.notify.take(nullptr);  // the kernel count was given up with notified sleeps about
    const Marks m1 = Marks::read(h);
    // A scan that follows a quiet one may end the decision: it must re-read the proven sleepers
    // (the candidate scan before it relied on proofs made earlier).
    Snapshot snap = m.scan(have_prev, m1.activity);
    // A wait begun or ended, or the tracer taking an exit, meanwhile: busy.
    const Marks m2 = Marks::read(h);
    m.last_scan_busy = snap.busy || !m1.settled() || m2 != m1;
    if (m.last_scan_busy) {
      have_prev = false;
      ++busy_rounds;
      long cap = m.on_busy();
      if (snap.unconsumed >= 16) {
        // Many wake-ups not handled yet (one advance woke many sleepers): the tree cannot be
        // idle before each of them ran, which takes every one of them a few microseconds of
        // cpu. Looking again sooner would only take a cpu from them, and so would being woken
        // by every one of them that begins or ends a wait: sleep for a time in proportion,
        // without asking to be woken. Only when to look again depends on this; what is seen
        // then is decided as always.
        m.pause_us(std::min<long>(cap, 2L * snap.unconsumed));
      } else if (busy_rounds < 4) {
        sched_yield();  // the usual case: a thread about to block finishes doing so
      } else {
        long budget = std::min<long>(cap, 20L << std::min(busy_rounds - 4, 7));
        m.wait_activity(m2.activity, budget);
      }
      continue;
    }
    if (have_prev && prev_marks == m2 && snap == prev) {
      ++m.stats.idle_decisions;
      m.end_busy();
      return IdleResult::kIdle;
    }
    busy_rounds = 0;  // a quiet scan ends a busy stretch: the next one backs off from the start
    prev = std::move(snap);
    prev_marks = m2;
    have_prev = true;
  }
}

std::optional<TimePoint> Controller::next_deadline() {
  impl_->drop_ended_tracer_waits();
  return impl_->idle_deadline();
}

namespace {

// The value the clock state `c` gives at the real instant `p` (the writer's own read_clock).
int64_t clock_value_at(const abi::ClockState& c, const TscCalibration::Pair& p) {
  int64_t base = c.now_ns.load(std::memory_order_relaxed);
  int64_t rate = c.rate_ppm.load(std::memory_order_relaxed);
  if (rate == 0) return base;
  if (uint64_t mult = c.tsc_mult.load(std::memory_order_relaxed); mult != 0) {
    return base + detail::tsc_elapsed(p.tsc, c.tsc_base.load(std::memory_order_relaxed), mult);
  }
  __extension__ typedef __int128 wide;
  return base + static_cast<int64_t>(static_cast<wide>(p.mono_ns - c.real_base_ns.load(std::memory_order_relaxed)) *
                                     rate / 1000000);
}

// The clock's only writer: a seqlock write of (now, real base, counter base, rate). The clock
// continues from the value it had when seq became odd (raised to `at_least`): the real time is
// taken after that store is visible, so no reader that passed its check saw more, and a clock
// that stops or changes rate never goes back (abi::ClockState).
void write_clock(abi::ClockState& c, const TscCalibration& tsc, std::optional<TimePoint> at_least, int64_t rate_ppm) {
  uint64_t s = c.seq.load(std::memory_order_relaxed);
  c.seq.store(s + 1, std::memory_order_seq_cst);  // a full barrier on x86: visible before the reads below
#if defined(__x86_64__)
  __builtin_ia32_lfence();  // and the counter is not read ahead of it
#endif
  TscCalibration::Pair p = tsc.take();
  int64_t now = clock_value_at(c, p);
  if (at_least && at_least->ns() > now) now = at_least->ns();
  // Release stores: a reader that sees new data also sees the odd seq written before it.
  c.now_ns.store(now, std::memory_order_release);
  c.real_base_ns.store(p.mono_ns, std::memory_order_release);
  c.tsc_base.store(p.tsc, std::memory_order_release);
  c.tsc_mult.store(tsc.mult(p, rate_ppm), std::memory_order_release);
  c.rate_ppm.store(rate_ppm, std::memory_order_release);
  c.seq.store(s + 2, std::memory_order_release);
}

// Sets the clock to t, never backwards, without waking anyone.
void set_clock_now(abi::ClockState& c, const TscCalibration& tsc, TimePoint t) {
  TimePoint cur = Session::read_clock(c);
  if (t > cur) write_clock(c, tsc, t, c.rate_ppm.load(std::memory_order_relaxed));
}

}  // namespace

void Controller::set_now(TimePoint t) { set_clock_now(impl_->seg.header.clock, impl_->tsc, t); }

void Controller::set_cpu_model(const CpuModelOptions& cpu) { impl_->cpu = cpu; }

// How long the tree may keep virtual time still while it runs and timed waits are pending before
// vtime says so (once): long enough that no real program's burst of work reaches it.
constexpr int64_t kStillWarnNs = 3'000'000'000;

long Controller::Impl::on_busy() {
  int64_t real = real_monotonic_ns();
  auto& clk = seg.header.clock;
  if (busy_since == 0) {
    busy_since = real;
    busy_clock = Session::read_clock(clk).ns();
    busy_reads.reset();
  }
  if (!warned && !busy_reads && real - busy_since >= kStillWarnNs / 2) {
    busy_reads = live_clock_reads(seg);  // the baseline for the warning, long before it is due
  }
  bool flow = false;
  pid_t spinner = 0;
  if (!flowing && cpu.model == abi::kCpuReal) {
    flow = true;
  } else if (!flowing && cpu.model == abi::kCpuCalls && cpu.busy_limit_ns > 0 &&
             real - busy_since >= cpu.busy_limit_ns / 2 && real >= next_flow_check) {
    // Only a computation that keeps a timed waiter waiting moves time (a program starting up,
    // with nothing waiting on the clock, stays exact however long it computes).
    spinner = user_mode_spin(real);
    flow = spinner != 0 && earliest_deadline(seg).has_value();
    next_flow_check = real + 1'000'000;  // look again in a millisecond
  }
  if (flow) {
    // From now on the clock runs with real time (scaled) until the tree is idle again.
    double rate = cpu.model == abi::kCpuReal ? cpu.scale : 1.0;
    write_clock(clk, tsc, std::nullopt, static_cast<int64_t>(rate * 1e6));
    flowing = true;
    next_flow_check = 0;
    if (cpu.model == abi::kCpuCalls && ++stats.busy_flows == 1) warn_busy_flow(spinner, real);
  }
  if (real >= next_tsc_write && tsc.usable() && clk.rate_ppm.load(std::memory_order_relaxed) != 0) {
    // A running clock is rewritten where it stands (no reader sees a step): its first write may
    // have come before the counter's calibration had a millisecond (the clock then reads
    // CLOCK_MONOTONIC), and a longer span refines the counter's rate.
    write_clock(clk, tsc, std::nullopt, clk.rate_ppm.load(std::memory_order_relaxed));
    next_tsc_write = real + (clk.tsc_mult.load(std::memory_order_relaxed) == 0 ? 1'000'000 : 1'000'000'000);
  }
  long cap = 2000;
  if (flowing && real >= next_flow_check) {
    // Waits whose deadline the running clock passed are due now, busy tree or not.
    TimePoint t = Session::read_clock(clk);
    std::optional<TimePoint> next = earliest_deadline(seg);
    for (int round = 0; round < 2 && next && *next <= t; ++round) {
      advance(t, false);
      next = earliest_deadline(seg);
    }
    int64_t rate = clk.rate_ppm.load(std::memory_order_relaxed);
    if (next && rate > 0) {
      __extension__ typedef __int128 wide;
      int64_t real_left = static_cast<int64_t>(static_cast<wide>((*next - t).ns()) * 1000000 / rate);
      cap = static_cast<long>(std::clamp<int64_t>(real_left / 1000, 20, 2000));
    }
    next_flow_check = real + static_cast<int64_t>(cap) * 1000;
  }
  if (!warned && busy_reads && real - busy_since >= kStillWarnNs && Session::read_clock(clk).ns() == busy_clock) {
    warn_time_stands_still(real);
  }
  return cap;
}

std::map<pid_t, std::pair<uint64_t, uint64_t>> Controller::Impl::cpu_times() {
  std::map<pid_t, std::pair<uint64_t, uint64_t>> out;
  std::vector<pid_t> tids;
  for (pid_t pid : pids()) {
    if (!proc.thread_ids(pid, 0, -1, tids)) continue;  // a fresh listing; the samples are not needed
    for (pid_t tid : tids) {
      uint64_t u = 0, st = 0;
      if (thread_cpu_times(pid, tid, &u, &st)) out[tid] = {u, st};
    }
  }
  return out;
}

pid_t Controller::Impl::user_mode_spin(int64_t real) {
  int64_t half = cpu.busy_limit_ns / 2;
  if (spin_sample_at == 0) {
    spin_sample = cpu_times();
    spin_sample_at = real;
    return 0;
  }
  if (real - spin_sample_at < half) return 0;
  auto now_times = cpu_times();
  double ticks = static_cast<double>(real - spin_sample_at) / 1e9 * static_cast<double>(sysconf(_SC_CLK_TCK));
  pid_t spin = 0;
  uint64_t most = 0;
  for (auto& [tid, t] : now_times) {
    auto it = spin_sample.find(tid);
    if (it == spin_sample.end()) continue;
    uint64_t du = t.first - it->second.first, ds = t.second - it->second.second;
    // On the cpu most of the window, and at least 19 ticks of 20 of it in user mode.
    if (static_cast<double>(du) >= 0.6 * ticks && ds * 19 <= du && du > most) {
      spin = tid;
      most = du;
    }
  }
  spin_sample = std::move(now_times);  // the next window starts here
  spin_sample_at = real;
  return spin;
}

void Controller::Impl::end_busy() {
  busy_since = 0;
  next_flow_check = 0;
  spin_sample_at = 0;
  spin_sample.clear();
  if (flowing) {
    auto& clk = seg.header.clock;
    write_clock(clk, tsc, std::nullopt, 0);
    flowing = false;
  }
}

void Controller::Impl::warn_busy_flow(pid_t spinner, int64_t real_now) {
  char path[64], comm[64] = "?";
  snprintf(path, sizeof path, "/proc/%d/comm", static_cast<int>(spinner));
  if (FILE* f = fopen(path, "re")) {
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
    fclose(f);
  }
  auto next = earliest_deadline(seg);
  fprintf(stderr,
          "vtime: tid %d (%s) has computed in user mode, with no call the CPU-time model charges, for %.0f ms of real "
          "time while timed waits are pending (the earliest at %.9f s): the clock runs with real time until the tree "
          "is idle again (--cpu-busy-limit), so from here on this run's instants depend on the machine's speed; "
          "later such stretches are counted by --stats\n",
          static_cast<int>(spinner), comm, static_cast<double>(real_now - busy_since) / 1e6,
          next ? static_cast<double>(next->ns()) / 1e9 : 0.0);
}

void Controller::Impl::warn_time_stands_still(int64_t real_now) {
  auto next = earliest_deadline(seg);
  uint64_t reads = busy_reads ? live_clock_reads(seg) - *busy_reads : 0;
  // Nothing waits on time and nobody reads the clock: a long computation, not a busy-wait.
  if (!next && reads < 1000) return;
  warned = true;
  std::string running;
  for (auto& t : describe()) {
    if (t.state != 'R') continue;
    if (!running.empty()) running += ", ";
    running += "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " (" + t.comm + ")";
  }
  if (running.empty()) running = "a thread of the tree";
  const char* hint = cpu.model == abi::kCpuZero
                         ? "--cpu-model calls (the default of vtime exec and run) lets clock reads and polls cost time; "
                           "--cpu-model real "
                           "lets the clock run while the tree computes"
                         : "--cpu-model real lets the clock run while the tree computes";
  char what[160];
  if (next) {
    snprintf(what, sizeof what, "running while the earliest pending deadline is %.9f s", static_cast<double>(next->ns()) / 1e9);
  } else {
    snprintf(what, sizeof what, "reading the clock (%llu reads in the last %.1f s)", static_cast<unsigned long long>(reads),
             static_cast<double>(kStillWarnNs / 2) / 1e9);
  }
  fprintf(stderr,
          "vtime: virtual time has stood still at %.9f s for %.1f s of real time: %s keep%s %s "
          "(a busy-wait?); %s\n",
          static_cast<double>(busy_clock) / 1e9, static_cast<double>(real_now - busy_since) / 1e9, running.c_str(),
          running.find(',') == std::string::npos ? "s" : "", what, hint);
}

void Controller::set_rate(double factor) {
  auto& c = impl_->seg.header.clock;
  write_clock(c, impl_->tsc, std::nullopt, static_cast<int64_t>(factor * 1e6));
}

void Controller::set_serial(bool on) { impl_->seg.header.serial.store(on ? 1 : 0, std::memory_order_release); }

void Controller::watch_own_threads(bool on) { impl_->watch_self = on; }

int Controller::advance_to(TimePoint t) { return impl_->advance(t, false); }

int Controller::advance_step(TimePoint t) { return impl_->advance(t, true); }

int Controller::Impl::advance(TimePoint t, bool one_process, bool in_stats) {
  Impl& m = *this;
  // An advance that did not follow an idle decision (the broker's timeout policy, a running
  // clock) takes the sleeps notified meanwhile first (notify_sleeps.h): nothing else would.
  if (!one_process) m.notify.take(m.watch);
  auto& h = m.seg.header;
  m.drop_ended_tracer_waits();
  set_clock_now(m.seg.header.clock, m.tsc, t);
  std::vector<Due>& due = m.due_buf;
  due.clear();
  for (uint32_t i = 0, n = detail::waiter_limit(m.seg); i < n; ++i) {
    auto& w = m.seg.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (d <= t.ns()) {
      due.push_back({d, w.seq.load(std::memory_order_relaxed), i, w.process.load(std::memory_order_relaxed),
                     w.pid.load(std::memory_order_relaxed), housekeeping(w)});
    }
  }
  // Of the due waiters `pick` keeps, the process whose turn comes first.
  auto first_turn_among = [&m](const std::vector<Due>& of, auto pick) {
    std::vector<pid_t>& pids = m.pids_buf;
    pids.clear();
    for (const Due& d : of) {
      if (pick(d)) pids.push_back(d.pid);
    }
    return m.turns.first_turn(pids);
  };
  const bool serial = h.serial.load(std::memory_order_acquire) != 0;
  pid_t step_pid = 0;  // one_process: the process this step is for
  if (one_process && !due.empty()) {
    // Only the earliest deadline, and of the processes due then, the one whose turn comes first
    // (turn_of): the caller lets the tree settle before the next step, so processes due at one
    // instant run one after another in an order that does not depend on real-time races (see
    // advance_step in controller.h). Housekeeping waits due by then go with this first step
    // (see earliest_deadline), unless they are all there is.
    bool program = std::any_of(due.begin(), due.end(), [](const Due& d) { return !d.housekeeping; });
    int64_t first = abi::kNoDeadline;
    for (const Due& d : due) {
      if (!program || !d.housekeeping) first = std::min(first, d.deadline);
    }
    pid_t pid = first_turn_among(due, [&](const Due& d) {
      return d.deadline == first && (!program || !d.housekeeping);
    });
    step_pid = pid;
    // The serial gate: a runtime's housekeeping (Go's sysmon) woken with its own process's
    // timers would run beside them, and what it does first (take in ready descriptors, hand a
    // processor over) would depend on real time. Other processes' housekeeping goes with the
    // step and is held by the gate until the tree is idle. This process's stays pending while
    // another process has timers due (the step for that one wakes it, and the gate holds it),
    // or else goes in a step of its own, before the timers.
    bool own_housekeeping = serial && program && std::any_of(due.begin(), due.end(), [&](const Due& d) {
      return d.housekeeping && d.pid == pid;
    });
    bool later_step = own_housekeeping && std::any_of(due.begin(), due.end(), [&](const Due& d) {
      return !d.housekeeping && d.pid != pid;
    });
    bool alone = own_housekeeping && !later_step;
    std::erase_if(due, [&](const Due& d) {
      if (program && d.housekeeping) return later_step && d.pid == pid;
      if (alone) return true;
      return d.deadline != first || d.pid != pid;
    });
  }
  // Deadline order; within one deadline, the waiters of one process together: the kernel wakes a
  // group in that order, and a cpu going from one woken thread to the next one of the same
  // process skips the address-space switch, which is dear on this kind of virtual machine
  // (page-table isolation): 1,000 sleepers in 4 processes ran 20% sooner.
  std::sort(due.begin(), due.end(), [](const Due& a, const Due& b) {
    if (a.deadline != b.deadline) return a.deadline < b.deadline;
    return a.process != b.process ? a.process < b.process : a.seq < b.seq;
  });
  // The serial gate: the tree goes to the process this step is for (the first turn of a
  // timeout policy's group); the others' threads due with it (a Go runtime's housekeeping) are
  // held until it is idle.
  if (serial && !due.empty()) {
    pid_t first = step_pid;
    if (first == 0) {
      bool program = std::any_of(due.begin(), due.end(), [](const Due& d) { return !d.housekeeping; });
      first = first_turn_among(due, [&](const Due& d) { return !program || !d.housekeeping; });
    }
    m.turns.give_tree(first);
  }
  int woken = 0;
  VTIME_LOGF("controller", LogLevel::kDebug, "advance to %lld: %zu due", static_cast<long long>(t.ns()), due.size());
  // One group per deadline, in deadline order. A group is first marked Woken entirely, then
  // woken with as few wake-ups as possible: one per agent, and one FUTEX_WAKE_BITSET per process
  // for all its sleepers (they all wait on their process's sleep word, each with the bit of its
  // slot; see abi::ProcessSlot). Waking sleepers one system call at a time made the controller
  // lose its cpu to every sleeper it woke (the kernel runs the wakee first), so the last of
  // 1,000 sleepers ran only after 1,000 such round trips. A sleeper not queued yet (between its
  // look at the word and its futex call) finds the word bumped and does not sleep; one whose bit
  // is shared with a woken slot wakes, finds its own slot still Waiting and waits again.
  // Sleepers with one deadline run concurrently anyway: the order among them was never
  // observable.
  std::vector<std::pair<uint32_t, uint32_t>> sleepers;  // process slot, bits to wake
  std::vector<uint32_t> agents;                          // process slots whose agent must run
  bool tracer_due = false;                               // waits of the tracer's threads are due
  for (size_t g = 0; g < due.size();) {
    size_t end = g;
    while (end < due.size() && due[end].deadline == due[g].deadline) ++end;
    sleepers.clear();
    agents.clear();
    for (size_t k = g; k < end; ++k) {
      auto& w = m.seg.waiters[due[k].index];
      // Waking while this checks that the slot still holds the wait found due (abi::kWaking): its
      // owner may have ended it and armed the next one on the slot since the look above, which
      // may even have read one wait's deadline and the next one's seq. While the slot is Waking
      // its owner writes no field of it without making that step fail (finish_waking).
      uint32_t expected = abi::kWaiting;
      if (!w.state.compare_exchange_strong(expected, abi::kWaking, std::memory_order_seq_cst)) continue;
      if (w.seq.load(std::memory_order_acquire) != due[k].seq || w.deadline.load(std::memory_order_acquire) > t.ns()) {
        finish_waking(w, abi::kWaiting);
        continue;
      }
      // Not a step (advance_step comes after the tree was found idle): the timeout policy or a
      // running clock, so the waiter may still be on its way to its blocking call
      // (abi::kAgentRetry). Set before the slot turns Woken, which the agent looks at first.
      if (!one_process && w.wake_kind.load() == abi::kWakeAgent && w.is_timer.load() == 0) {
        w.tracer_flags.fetch_or(abi::kAgentRetry, std::memory_order_relaxed);
      }
      if (w.wake_kind.load() == abi::kWakeTracer) {
        const uint32_t flags = w.tracer_flags.load();
        const int counted = (flags & abi::kTracerHousekeeping) == 0 ? 1 : 0;
        if ((flags & abi::kTracerNotify) != 0) {
          // The controller's own (notify_sleeps.h): answered here. A notification a signal took
          // away leaves the slot Woken: the call the kernel restarts is answered when it comes,
          // or the tracer ends the sleep if a handler ran.
          const auto answered = m.notify.answer(due[k].index);
          if (answered == detail::NotifiedSleeps::Answer::kGone) {
            finish_waking(w, abi::kWoken);
          } else if (finish_waking(w, abi::kClaimed)) {
            detail::free_slot(w);  // answered, or a slot no sleep of ours holds any more
          }
          if (answered != detail::NotifiedSleeps::Answer::kUnknown) woken += counted;
          continue;
        }
        // A direct sleep (abi::kTracerDirect) is woken here, on its slot's word, when its thread
        // is queued there: the kernel count then counts it from this wake-up on, so the slot can
        // end at once. Without the count (the /proc rule needs the Woken slot until the wake-up is
        // taken), under the serial gate (which holds threads at the exit of their waits), or when
        // no task was queued (a wake that did not wait for the tree to be idle), the tracer
        // interrupts it like its other waits.
        if ((flags & abi::kTracerDirect) != 0) {
          if (m.watch != nullptr && !serial && detail::futex_wake_bitset(&w.word, abi::direct_bit(due[k].seq)) == 1) {
            // Counted even if the tracer re-armed the slot meanwhile: the thread did wake.
            finish_waking(w, abi::kClaimed);
            woken += counted;
            continue;
          }
          // Sequentially consistent, and before the slot turns Woken: the tracer interrupts only
          // Woken slots without the flag.
          w.tracer_flags.fetch_and(~abi::kTracerDirect, std::memory_order_seq_cst);
        }
        // Sequentially consistent (finish_waking): ordered before the read of tracer_awake below.
        if (!finish_waking(w, abi::kWoken)) continue;
        woken += counted;
        tracer_due = true;
        continue;
      }
      if (!finish_waking(w, abi::kWoken)) continue;  // its owner ended it meanwhile
      ++woken;
      uint32_t pi = w.process.load();
      if (pi >= abi::kProcessSlots) continue;
      if (w.wake_kind.load() == abi::kWakeAgent) {
        if (std::find(agents.begin(), agents.end(), pi) == agents.end()) agents.push_back(pi);
      } else {
        w.word.fetch_add(1, std::memory_order_acq_rel);  // ends the controller's proof of it
        auto it = std::find_if(sleepers.begin(), sleepers.end(), [&](const auto& e) { return e.first == pi; });
        if (it == sleepers.end()) {
          sleepers.emplace_back(pi, abi::sleep_bit(due[k].index));
        } else {
          it->second |= abi::sleep_bit(due[k].index);
        }
      }
    }
    // The agent runs every due action of its process in one pass: one wake-up is enough.
    for (uint32_t pi : agents) detail::wake_agent(m.seg, pi);
    for (auto [pi, bits] : sleepers) detail::wake_sleepers(m.seg, pi, bits);
    g = end;
  }
  // The tracer interrupts the due calls of its threads (tracer/tracer.h).
  // A tracer that polls finds them itself (abi::Header::tracer_awake: the slots were marked Woken
  // above and the flag is read here, both sequentially consistent, as the tracer's side is).
  if (pid_t tracer = h.tracer_pid.load(std::memory_order_acquire);
      tracer_due && tracer > 0 && h.tracer_awake.load(std::memory_order_seq_cst) == 0) {
    kill(tracer, SIGUSR2);
  }
  if (in_stats) {  // not nudge_sysmon's, which moves no time
    h.advances.fetch_add(1, std::memory_order_relaxed);
    h.wakeups.fetch_add(static_cast<uint64_t>(woken), std::memory_order_relaxed);
    ++m.stats.advances;
    m.stats.wakeups += static_cast<uint64_t>(woken);
  }
  return woken;
}

std::vector<pid_t> Controller::tree_pids() { return impl_->pids(); }
bool Controller::root_exited() { return impl_->root_exiting(); }

void Controller::reclaim_dead() { impl_->reclaim_dead(); }

ControllerStats Controller::stats() const {
  ControllerStats s = impl_->stats;
  s.kernel_count = impl_->watch != nullptr;
  s.handovers = impl_->seg.header.serial_handovers.load(std::memory_order_relaxed);
  s.notified = impl_->notify.answered();
  return s;
}

std::vector<ThreadReport> Controller::Impl::describe() {
  Impl& m = *this;
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
      for (uint32_t i = 0, n = detail::waiter_limit(m.seg); i < n; ++i) {
        auto& w = m.seg.waiters[i];
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
      if (r.waits_on.empty() && t.state != 'Z' && !t.running && t.syscall_nr >= 0) {
        char line[256];
        int n = m.proc.syscall_line(pid, t.tid, line, sizeof line - 1);
        if (n > 0) {
          line[n] = 0;
          r.real_timeout = detail::real_timeout_of(pid, line);
          if (!r.real_timeout.empty()) r.waits_on = r.real_timeout + ", which vtime does not control";
        }
      }
      if (r.waits_on.empty()) {
        // The sample already read /proc/.../syscall.
        long nr = t.syscall_nr;
        const char* name = detail::syscall_name(nr);
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

std::vector<ThreadReport> Controller::describe() { return impl_->describe(); }

}  // namespace vtime
