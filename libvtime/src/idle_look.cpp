// Whether the wrapped tree is idle (see idle_look.h).
#include "idle_look.h"

#include <vtime/tree_watch.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/slots.h>

#include "waiter_kinds.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace vtime::detail {

bool IdleLook::proc_sees_tree_asleep() {
  const Marks m1 = Marks::read(seg_.header);
  if (!m1.settled()) return false;
  Snapshot first = scan(false, m1.activity);
  if (first.busy) return false;
  Snapshot second = scan(true, m1.activity);
  return !second.busy && second == first && Marks::read(seg_.header) == m1;
}

void IdleLook::give_up_kernel_count(const char* why, LogLevel level) {
  // Images patched from now on keep their sleeps with the tracer: a notification does not wake
  // the /proc rule's waits (it is still taken at every look).
  seg_.header.notify_sleeps.store(2, std::memory_order_release);
  // Events the kernel dropped because they came while the same program ran on their cpu (an
  // interrupt inside it) leave the count wrong: say whether there were any (docs/shim.md).
  VTIME_LOGF("controller", level, "%s (the kernel skipped %llu of the count's program runs): idle decisions read /proc from now on",
             why, static_cast<unsigned long long>(watch_ ? watch_->misses() : 0));
  watch_ = nullptr;
}

// The broker's own threads but the caller, each sampled in full; false if one runs.
bool IdleLook::sample_own_threads(std::vector<ThreadSample>& out) {
  out.clear();
  pid_t self = getpid();
  std::vector<pid_t> ids;
  if (!members_.own_thread_ids(proc_.forks(), ids)) return true;
  for (pid_t tid : ids) {
    ThreadSample t;
    if (!proc_.sample(self, tid, t)) continue;
    if (running_state(t.state) || t.running) return false;
    out.push_back(t);
  }
  return true;
}

void IdleLook::reclaim_dead() { reclaim(nullptr, nullptr); }

void IdleLook::reclaim(const std::vector<pid_t>* ended, const std::vector<pid_t>* exited) {
  if (ended) {
    members_.reclaim_ended(*ended);
  } else {
    members_.live_roots(nullptr, nullptr);
  }
  for (auto it = watched_pids_.begin(); it != watched_pids_.end();) {
    const bool may_be_gone = !ended || std::find(ended->begin(), ended->end(), *it) != ended->end();
    it = !may_be_gone || kill(*it, 0) == 0 || errno != ESRCH ? std::next(it) : watched_pids_.erase(it);
  }
  members_.free_gone_threads(exited);
}

// The count saw threads exit since the last look (`exits` now): false while one is a traced
// zombie or the root's exit is on its way; otherwise the dead ones' slots are freed.
bool IdleLook::exits_settled(uint64_t exits) {
  if (exits == reclaimed_exits_) return true;
  // The kernel names the threads that exited and the processes that may have ended with them:
  // only those are looked at, the whole tree only when it could not. Most exits are threads of
  // a process that lives on (Slurm's daemons end a thread per RPC); reading every process's
  // /proc status at each cost a fifth of vtime's CPU time in a run through Slurm.
  const bool named = watch_->exited(reclaimed_exits_, exits, exited_, ended_);
  // A traced process that exited is reported to the tracer before its parent: until the
  // tracer has reaped it, the parent (or vtime) cannot, and the tree is not done with it.
  // The count saw it die; only /proc says whether it is still a traced zombie.
  if (seg_.header.traced.load(std::memory_order_acquire) != 0) {
    for (pid_t pid : named ? ended_ : members_.pids()) {
      if (proc_.thread_state(pid, pid) == 'Z' && members_.traced_zombie(pid)) return false;
    }
  }
  const bool root_may_have_ended = !named || std::find(ended_.begin(), ended_.end(), members_.root()) != ended_.end();
  if (root_may_have_ended && members_.root_exiting()) return false;
  if (named) {
    reclaim(&ended_, &exited_);
  } else {
    reclaim_dead();
  }
  notify_.threads_exited();
  reclaimed_exits_ = exits;
  return true;
}

// Every registered process is one the count watches; false when one is being filled in, or
// is not watched (the count is then given up: membership is by descent from the root).
bool IdleLook::registered_watched() {
  for (uint32_t i = 0, n = process_limit(seg_); i < n; ++i) {
    auto& p = seg_.processes[i];
    uint32_t st = p.state.load(std::memory_order_acquire);
    if (st == abi::kProcessFilling) return false;
    if (st != abi::kProcessLive) continue;
    pid_t pid = p.pid.load();
    if (watched_pids_.count(pid)) continue;
    if (!watch_->watches(pid)) {
      if (kill(pid, 0) != 0 && errno == ESRCH) {
        // Gone (killed from outside and reaped since its slot was read): not a sign of a
        // process outside the tree. Not idle now; the next look reclaims its slot.
        reclaimed_exits_ = ~0ull;
        return false;
      }
      char why[96];
      snprintf(why, sizeof why, "registered process %d is not a descendant the kernel count watches", pid);
      give_up_kernel_count(why);
      return false;
    }
    watched_pids_.insert(pid);
  }
  return true;
}

bool IdleLook::kernel_look(bool* busy_active, uint32_t* unconsumed) {
  ++scans_;
  auto& h = seg_.header;
  *busy_active = false;
  *unconsumed = 0;
  const Marks m1 = Marks::read(h);
  if (!m1.settled()) return false;  // the tracer is taking an exit: a parent may be about to wake
  TreeWatch::Counts c1 = watch_->counts();
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
  notify_.take(watch_);
  if (watch_self_ && !sample_own_threads(own_before_)) return false;
  if (!exits_settled(c1.exits) || !registered_watched()) return false;
  bool quiet = true;
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    if (seg_.waiters[i].state.load(std::memory_order_acquire) == abi::kWoken) {
      quiet = false;
      ++*unconsumed;
    }
  }
  if (!quiet || trace_request_pending()) return false;
  if (watch_self_) {
    std::vector<ThreadSample> own_after;
    if (!sample_own_threads(own_after) || own_before_ != own_after) return false;
  }
  TreeWatch::Counts c2 = watch_->counts();
  const Marks m2 = Marks::read(h);
  if (c2.active != 0) *busy_active = true;
  return c2.active == 0 && c2.generation == c1.generation && m2 == m1;
}

// Every thread of every live process of the tree (and the controller's own, watch_self_).
void IdleLook::list_threads(Snapshot& snap, uint64_t forks, std::vector<Listed>& listed,
                            std::unordered_set<pid_t>& tids, std::unordered_set<pid_t>& live_pids) {
  std::unordered_map<pid_t, ProcessStatus> status;
  std::unordered_set<pid_t> roots = members_.live_roots(&status, &snap.busy);
  std::vector<pid_t> pids(roots.begin(), roots.end());
  for (pid_t d : proc_.descendants(roots, forks)) pids.push_back(d);
  std::sort(pids.begin(), pids.end());
  std::vector<pid_t> ids;
  for (pid_t pid : pids) {
    ProcessStatus ps;
    auto st = status.find(pid);
    if (st != status.end()) {
      ps = st->second;
    } else if (!proc_.process_status(pid, ps)) {
      continue;  // gone
    }
    // The leader's own state: a stopped process (SIGSTOP, ^Z) holds the clock even when all
    // its threads are proven sleepers, whose state letters are not read.
    if (running_state(ps.state)) snap.busy = true;
    if (!proc_.thread_ids(pid, forks, ps.threads, ids)) continue;
    live_pids.insert(pid);
    snap.pids.push_back(pid);
    for (pid_t tid : ids) {
      listed.push_back({pid, tid});
      tids.insert(tid);
    }
  }
  if (watch_self_) {
    // The controller's own process: every thread but the one running this scan.
    pid_t self = getpid();
    if (members_.own_thread_ids(forks, ids)) {
      live_pids.insert(self);
      for (pid_t tid : ids) {
        listed.push_back({self, tid});
        tids.insert(tid);
      }
    }
  }
}

// The waiter table. A thread slot whose thread is gone can never be consumed; a woken one
// means a wake-up the tree has not handled yet. Each thread's single wait, if it has one
// and nothing else, makes it a candidate for a proof: a sleeper (futex) or a tagged fd wait.
void IdleLook::read_waiters(Snapshot& snap, const std::unordered_set<pid_t>& tids,
                            std::unordered_map<pid_t, int64_t>& sleep_slot) {
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    uint32_t st = w.state.load(std::memory_order_acquire);
    if (st != abi::kWaiting && st != abi::kWoken) continue;
    bool timer = w.is_timer.load() != 0;
    pid_t tid = w.tid.load();
    if (!timer && !tids.count(tid)) {
      // Not in this scan's thread list: either gone, or created after the list was read
      // (then the tree is not idle anyway). Only the kernel can tell which.
      if (!members_.free_if_thread_gone(i)) snap.busy = true;
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
}

// Proven threads first (see "Futex proofs"): their samples go to `snap`, the others to `others`.
void IdleLook::prove(const std::vector<Listed>& listed, const std::unordered_map<pid_t, int64_t>& sleep_slot,
                     const std::unordered_set<pid_t>& live_pids, bool confirming, Snapshot& snap,
                     std::vector<Listed>& others) {
  proofs_.count_sleepers(sleep_slot);
  // Agents: tid -> process slot.
  std::unordered_map<pid_t, uint32_t> agents;
  for (uint32_t i = 0, n = process_limit(seg_); i < n; ++i) {
    auto& p = seg_.processes[i];
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive) continue;
    pid_t a = p.agent_tid.load(std::memory_order_acquire);
    if (a > 0 && live_pids.count(p.pid.load())) agents.emplace(a, i);
  }
  for (const Listed& l : listed) {
    SleeperProof ref;
    bool candidate = false;
    if (auto a = agents.find(l.tid); a != agents.end()) {
      ref.kind = ProofKind::kAgent;
      ref.slot = a->second;
      ref.word = seg_.processes[a->second].agent_word.load(std::memory_order_acquire);
      candidate = true;
    } else if (auto s = sleep_slot.find(l.tid); s != sleep_slot.end() && s->second >= 0) {
      auto& w = seg_.waiters[s->second];
      uint32_t kind = w.wake_kind.load(std::memory_order_acquire);
      ref.kind = kind == abi::kWakeFutex ? ProofKind::kSleeper : ProofKind::kTagged;
      ref.slot = static_cast<uint32_t>(s->second);
      ref.seq = w.seq.load(std::memory_order_acquire);
      ref.word = w.word.load(std::memory_order_acquire);
      candidate = w.state.load(std::memory_order_acquire) == abi::kWaiting;
    }
    uint64_t proof_id = 0;
    if (candidate && proofs_.proven(l.pid, l.tid, ref, confirming, &proof_id)) {
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
}

// Every thread not proven, read in full; false (snap busy) at the first that runs, or when a
// wait began or ended meanwhile.
bool IdleLook::read_in_full(const std::vector<Listed>& others, uint64_t activity, Snapshot& snap) {
  for (size_t k = 0; k < others.size(); ++k) {
    ThreadSample t;
    if (!proc_.sample(others[k].pid, others[k].tid, t)) continue;  // gone since the listing
    // A traced process that exited is reported to the tracer before its parent: until the
    // tracer has reaped it, its parent cannot, and the tree is not done with it.
    if (running_state(t.state) || t.running ||
        (t.state == 'Z' && ((t.tid == members_.root() && members_.root_exiting()) || members_.traced_zombie(t.tid)))) {
      snap.busy = true;
      return false;
    }
    snap.threads.push_back(t);
    // Something began or ended a wait: this scan cannot be the last one; stop reading.
    if ((k & 7) == 7 && seg_.header.activity.load(std::memory_order_seq_cst) != activity) {
      snap.busy = true;
      return false;
    }
  }
  return true;
}

Snapshot IdleLook::scan(bool confirming, uint64_t activity) {
  ++scans_;
  Snapshot snap;
  // Read before every cache it validates (see ProcReader::forks). Only a confirming scan can
  // end a decision, and it reads the counter afresh; so does every scan after a busy one. The
  // first scan of a decision reuses the value of the last scan. That is safe because a decision
  // needs the confirming scan to equal the one before it: a process or thread that a scan
  // missed through a stale cache makes them differ. Reading afresh after a busy scan is what
  // makes it end: a thread of a stale list that ended, and a new one whose slot names a tid
  // missing from that list, would otherwise make every scan busy.
  if (confirming || last_scan_busy_ || last_forks_ == 0) last_forks_ = proc_.forks();
  std::vector<Listed> listed;
  std::unordered_set<pid_t> tids;
  std::unordered_set<pid_t> live_pids;
  list_threads(snap, last_forks_, listed, tids, live_pids);
  std::unordered_map<pid_t, int64_t> sleep_slot;  // tid -> slot, or -1: more than one wait
  read_waiters(snap, tids, sleep_slot);
  // A thread asking the tracer to take it (trace_request.h) waits in a futex the tables do not
  // show; until the tracer answered and it ran on, the tree is not idle.
  if (trace_request_pending()) snap.busy = true;
  if (snap.busy) return snap;
  std::vector<Listed> others;
  prove(listed, sleep_slot, live_pids, confirming, snap, others);
  if (!read_in_full(others, activity, snap)) return snap;
  // Forget what belongs to threads and processes no longer in the tree.
  proofs_.forget_gone(tids);
  proc_.prune(tids, live_pids);
  std::sort(snap.threads.begin(), snap.threads.end(),
            [](const ThreadSample& a, const ThreadSample& b) { return a.tid < b.tid; });
  return snap;
}

bool IdleLook::trace_request_pending() {
  bool pending = false;
  for (auto& r : seg_.header.trace_requests) {
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

std::optional<std::pair<uint64_t, Marks>> IdleLook::quiet_point() const {
  if (!watch_) return std::nullopt;
  TreeWatch::Counts c = watch_->counts();
  if (c.active != 0) return std::nullopt;
  return std::make_pair(c.generation, Marks::read(seg_.header));
}

// Waits of the tracer (abi::kWakeTracer) whose thread has left its call: the kernel woke it
// before the deadline, and the tracer learns that only at the thread's next stop. At an idle
// point a thread not inside its tagged call has left it for good (a thread stopped for the
// tracer is never idle): its slot is marked ended (Claimed) so that its deadline no longer
// counts. The tracer only writes a slot while the thread is stopped, and writes the tagged
// registers before it makes the slot Waiting, so an idle look never sees a new wait's slot
// with the old call's line. A timer the tracer emulates (is_timer, tracer/timers.h) is no
// call and stays. A direct sleep (abi::kTracerDirect) can only be left through a signal, and the
// tracer ends it itself then. Called at idle points only (wait_idle, next_deadline, advance).
void IdleLook::drop_ended_tracer_waits() {
  if (seg_.header.traced.load(std::memory_order_acquire) == 0) return;
  // Each tagged wait costs a read of /proc/TID/syscall (~4 us: the kernel waits for the thread
  // to be off its cpu), and this runs at the idle decision, for the next deadline and at the
  // advance, three times with nothing run in between. What a pass saw holds until a thread of
  // the tree runs again, and a thread that runs moves the count's generation (it becomes
  // active); the tracer arms a wait only while its thread is stopped, which counts as active
  // too. So with the count, a pass is skipped when the count was zero with the same generation
  // and marks at both ends of the last one and still is.
  const std::optional<std::pair<uint64_t, Marks>> before = quiet_point();
  if (before && before == tracer_waits_checked_) return;
  tracer_waits_checked_.reset();
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting ||
        w.wake_kind.load(std::memory_order_relaxed) != abi::kWakeTracer ||
        (w.tracer_flags.load(std::memory_order_relaxed) & (abi::kTracerExitTracked | abi::kTracerDirect | abi::kTracerNotify)) != 0 ||
        w.is_timer.load() != 0) {
      continue;
    }
    uint64_t seq = w.seq.load(std::memory_order_acquire);
    char line[256];
    int n_read = proc_.syscall_line(w.pid.load(), w.tid.load(), line, sizeof line - 1);
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
  if (before && quiet_point() == before) tracer_waits_checked_ = before;
}

}  // namespace vtime::detail
