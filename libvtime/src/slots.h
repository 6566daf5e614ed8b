// Giving a waiter slot back. The owner ids are cleared before the state, so a slot being claimed
// (Free -> Claimed, ids not written yet) never carries the ids of a dead owner that the
// controller's reclaim would match and free under the new owner's feet.
#pragma once

#include <vtime/abi.h>

namespace vtime::detail {

inline void free_slot(abi::WaiterSlot& s) {
  s.pid.store(0, std::memory_order_relaxed);
  s.tid.store(0, std::memory_order_relaxed);
  s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
  s.state.store(abi::kFree, std::memory_order_release);
}

}  // namespace vtime::detail
