// The idle look's proofs (see sleeper_proofs.h; why they hold: idle_look.h, "Proofs").
#include "sleeper_proofs.h"

#include <vtime/internal/futex.h>

#include "waiter_kinds.h"

#include <sys/syscall.h>

#include <cstring>
#include <utility>

namespace vtime::detail {

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

void SleeperProofs::count_sleepers(const std::unordered_map<pid_t, int64_t>& sleep_slot) {
  sleeper_count_.clear();
  queued_cache_.clear();
  for (auto& [tid, slot] : sleep_slot) {
    if (slot < 0) continue;
    auto& w = seg_.waiters[slot];
    if (w.wake_kind.load(std::memory_order_acquire) == abi::kWakeFutex) ++sleeper_count_[w.process.load()];
  }
}

// True when every sleeper of process slot `pi` is queued on the process's sleep word. Only
// sleepers ever wait there (in sleep_on, inside their wait), so when the count of queued tasks
// equals the count of sleepers, each one is queued: in the kernel, in its wait, not in user
// code. A nested wait (a handler sleeping inside a sleep) is not a sleeper and makes the
// counts differ: no proof for that process then, only full reads.
bool SleeperProofs::sleepers_queued(uint32_t pi) {
  if (pi >= abi::kProcessSlots) return false;
  auto cached = queued_cache_.find(pi);
  if (cached != queued_cache_.end()) return cached->second;
  auto& word = seg_.processes[pi].sleep_word;
  uint32_t v = word.load(std::memory_order_acquire);
  auto n = sleeper_count_.find(pi);
  bool ok = n != sleeper_count_.end() && futex_waiters(&word, v) == static_cast<long>(n->second);
  queued_cache_.emplace(pi, ok);
  return ok;
}

// The wait `ref` is still the one thread `tid` waits in.
bool SleeperProofs::same_wait(pid_t tid, const SleeperProof& ref) const {
  if (ref.kind == ProofKind::kAgent) {
    auto& p = seg_.processes[ref.slot];
    return p.agent_word.load(std::memory_order_acquire) == ref.word && p.agent_tid.load(std::memory_order_acquire) == tid;
  }
  auto& w = seg_.waiters[ref.slot];
  return w.state.load(std::memory_order_acquire) == abi::kWaiting && w.seq.load(std::memory_order_acquire) == ref.seq &&
         w.word.load(std::memory_order_acquire) == ref.word && w.tid.load(std::memory_order_relaxed) == tid;
}

// Records a new proof of `ref` for `tid` (with its syscall line, n > 0, for a tagged one).
bool SleeperProofs::keep(pid_t tid, const SleeperProof& ref, uint64_t* proof_id, const char* line, int n) {
  *proof_id = ++last_id_;
  SleeperProof p = ref;
  p.id = *proof_id;
  if (n > 0) p.line.assign(line, static_cast<size_t>(n));
  proofs_.emplace(tid, std::move(p));
  return true;
}

bool SleeperProofs::proven(pid_t pid, pid_t tid, const SleeperProof& ref, bool confirming, uint64_t* proof_id) {
  auto it = proofs_.find(tid);
  bool known = it != proofs_.end() && it->second.kind == ref.kind && it->second.slot == ref.slot &&
               it->second.seq == ref.seq && it->second.word == ref.word;
  if (known && !confirming) {
    *proof_id = it->second.id;
    return true;
  }
  if (ref.kind != ProofKind::kTagged) {
    // Futex waits (sleepers, agents): see "Futex proofs" in idle_look.h. Queued on the word now,
    // the state letter not running (a signal's wake-up in flight leaves the task queued but reads
    // 'R'), and the same wait after both reads.
    bool queued = ref.kind == ProofKind::kAgent
                      ? futex_waiters(&seg_.processes[ref.slot].agent_word, ref.word) == 1
                      : sleepers_queued(seg_.waiters[ref.slot].process.load(std::memory_order_relaxed));
    char st = 0;
    bool ok = queued && (st = proc_.thread_state(pid, tid)) != 0 && !running_state(st) && same_wait(tid, ref);
    if (ok && known) {
      *proof_id = it->second.id;
      return true;
    }
    if (it != proofs_.end()) proofs_.erase(it);
    if (!ok) return false;
    return keep(tid, ref, proof_id, nullptr, 0);
  }
  char line[256];
  int n = proc_.syscall_line(pid, tid, line, sizeof line - 1);
  if (known) {
    // The same call as when the proof was made, still blocked, and still the same wait (read
    // after the line: a wait that ended and a new one begun in between has another seq).
    // The state letter is read too: a wake-up in flight to another cpu leaves the old line in
    // place until that cpu runs the task, but already reads 'R' there (TASK_WAKING).
    char st = 0;
    if (n > 0 && it->second.line.size() == static_cast<size_t>(n) && memcmp(it->second.line.data(), line, n) == 0 &&
        (st = proc_.thread_state(pid, tid)) != 0 && !running_state(st) && same_wait(tid, ref)) {
      *proof_id = it->second.id;
      return true;
    }
  }
  if (it != proofs_.end()) proofs_.erase(it);
  // A new proof: it only counts for a decision once a later read shows the same line: its new
  // id makes this scan's sample differ from every earlier one, so only a later scan can end a
  // decision with it.
  if (n <= 0) return false;
  line[n] = 0;
  if (!is_tagged_wait(line, ref.seq) || !same_wait(tid, ref)) return false;
  return keep(tid, ref, proof_id, line, n);
}

void SleeperProofs::forget_gone(const std::unordered_set<pid_t>& tids) {
  if (proofs_.size() <= tids.size()) return;
  for (auto it = proofs_.begin(); it != proofs_.end();) {
    it = tids.count(it->first) ? std::next(it) : proofs_.erase(it);
  }
}

}  // namespace vtime::detail
