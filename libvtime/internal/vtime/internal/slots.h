// Waiter-slot helpers shared by the waiting side and the controller: the high-water mark of the
// table, giving a slot back, and waking sleepers.
#pragma once

#include <vtime/abi.h>

#include <vtime/internal/futex.h>

#include <sys/types.h>

#include <cstdint>

namespace vtime::detail {

// How many waiter slots to scan: none at or above this index has ever been claimed.
inline uint32_t waiter_limit(const abi::Segment& seg) {
  uint32_t n = seg.header.waiter_high.load(std::memory_order_seq_cst);
  return n;
}

// How many process slots to scan: none at or above this index has ever been claimed.
inline uint32_t process_limit(const abi::Segment& seg) {
  return seg.header.process_high.load(std::memory_order_seq_cst);
}

inline constexpr uint32_t kNoSlot = UINT32_MAX;

// Claims a free slot for thread `tid` of process `pid` (or, is_timer, for the process), whose
// process slot is `process` (abi::kNoProcess for a process the tracer runs); kNoSlot when the
// table is full. Lowest free slot first, so the used part of the table stays short (the
// controller scans up to waiter_high on every look).
uint32_t claim_waiter_slot(abi::Segment& seg, pid_t pid, pid_t tid, uint32_t process, bool is_timer);

// The owner's side of abi::kWaking: returns the slot's state once the controller is done with it
// (a few instructions; a second of real time is far more than a preempted controller needs, and
// a dead one ends the session anyway). Owners call it before a compare-exchange from Waiting.
abi::SlotState settle_waking(const abi::WaiterSlot& s);

// Giving a slot back. The owner ids are cleared before the state, so a slot being claimed
// (Free -> Claimed, ids not written yet) never carries the ids of a dead owner that the
// controller's reclaim would match and free under the new owner's feet.
inline void free_slot(abi::WaiterSlot& s) {
  s.pid.store(0, std::memory_order_relaxed);
  s.tid.store(0, std::memory_order_relaxed);
  s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
  s.early_ns.store(0, std::memory_order_relaxed);
  s.realtime_abs.store(0, std::memory_order_relaxed);
  s.state.store(abi::kFree, std::memory_order_release);
}

// Wakes the agent thread of process slot `process` (agent.h): it runs every due action of its
// process, and looks for clock sets, in one pass.
inline void wake_agent(abi::Segment& seg, uint32_t process) {
  auto& word = seg.processes[process].agent_word;
  word.fetch_add(1, std::memory_order_acq_rel);
  futex_wake(&word, 1);
}

// Wakes the sleepers of process slot `process` whose bits (abi::sleep_bit of their slots) are in
// `bits`, after their slots were updated: the bump makes a sleeper that has read the word but
// not entered its futex call yet return at once. One system call for all of them.
inline void wake_sleepers(abi::Segment& seg, uint32_t process, uint32_t bits) {
  if (process >= abi::kProcessSlots) return;
  auto& word = seg.processes[process].sleep_word;
  word.fetch_add(1, std::memory_order_acq_rel);
  futex_wake_bitset(&word, bits);
}

}  // namespace vtime::detail
