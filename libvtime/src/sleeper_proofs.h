// The idle look's proofs: whether a thread found waiting in our code is proven blocked in that
// wait for this scan, without the three /proc reads the general rule makes of every thread.
// idle_look.h, "Proofs", says what each kind of proof rests on and why it holds.
//
// Example (one scan of the idle look):
//     proofs.count_sleepers(sleep_slot);                  // once per scan, before any proof
//     if (proofs.proven(pid, tid, ref, confirming, &id))  // a sample naming proof `id`
//     proofs.forget_gone(tids);                           // threads no longer in the tree
#pragma once

#include <vtime/abi.h>
#include <vtime/internal/proc_reader.h>

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace vtime::detail {

enum class ProofKind : uint8_t { kSleeper, kTagged, kAgent };

// A wait a proof is about, as a scan read it; with the proof's id and, for a tagged wait, the
// /proc/TID/syscall line it was made from.
struct SleeperProof {
  ProofKind kind = ProofKind::kSleeper;
  uint32_t slot = 0;  // waiter slot, or process slot for an agent
  uint64_t seq = 0;   // the wait's seq (0 for an agent)
  uint32_t word = 0;
  uint64_t id = 0;  // unique per proof: a sample names the proof it relies on
  std::string line;
};

// A tagged fd wait of the wait numbered `seq` (idle_look.h, "Tagged proofs"): ppoll(fds, n, tmo,
// NULL, tag), epoll_pwait(epfd, events, max, timeout, NULL, tag), or the tracer's futex forms.
bool is_tagged_wait(const char* line, uint64_t seq);

class SleeperProofs {
 public:
  SleeperProofs(abi::Segment& seg, ProcReader& proc) : seg_(seg), proc_(proc) {}

  // Sleepers per process for this scan, from each thread's single wait (tid -> waiter slot, or
  // -1 for a thread with more than one): asked before the scan's first proof.
  void count_sleepers(const std::unordered_map<pid_t, int64_t>& sleep_slot);
  // True when thread `tid` of `pid`, found waiting in `ref` (a waiter slot read as (Waiting,
  // seq, word), or for an agent its process slot and agent_word), is proven blocked in that
  // wait for this scan; *proof_id names the proof. `confirming`: the scan may end a decision, so
  // an existing proof must be re-read.
  bool proven(pid_t pid, pid_t tid, const SleeperProof& ref, bool confirming, uint64_t* proof_id);
  // Forgets the proofs of threads not in `tids` (the tree's threads at this scan).
  void forget_gone(const std::unordered_set<pid_t>& tids);

 private:
  bool sleepers_queued(uint32_t pi);
  bool same_wait(pid_t tid, const SleeperProof& ref) const;
  bool keep(pid_t tid, const SleeperProof& ref, uint64_t* proof_id, const char* line, int n);

  abi::Segment& seg_;
  ProcReader& proc_;
  std::unordered_map<pid_t, SleeperProof> proofs_;  // by tid
  uint64_t last_id_ = 0;
  // Sleepers of a process, counted in this scan (threads whose one wait is a Waiting kWakeFutex
  // slot), and whether that many tasks are queued on its sleep word (asked once per scan).
  std::unordered_map<uint32_t, uint32_t> sleeper_count_;
  std::unordered_map<uint32_t, bool> queued_cache_;
};

}  // namespace vtime::detail
