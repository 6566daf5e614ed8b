// Giving a waiter slot back. The owner ids are cleared before the state, so a slot being claimed
// (Free -> Claimed, ids not written yet) never carries the ids of a dead owner that the
// controller's reclaim would match and free under the new owner's feet.
#pragma once

#include <vtime/abi.h>

namespace vtime::detail {

// How many waiter slots to scan: none at or above this index has ever been claimed.
inline uint32_t waiter_limit(const abi::Segment& seg) {
  uint32_t n = seg.header.waiter_high.load(std::memory_order_seq_cst);
  return n;
}

inline void free_slot(abi::WaiterSlot& s) {
  s.pid.store(0, std::memory_order_relaxed);
  s.tid.store(0, std::memory_order_relaxed);
  s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
  s.state.store(abi::kFree, std::memory_order_release);
}

}  // namespace vtime::detail
