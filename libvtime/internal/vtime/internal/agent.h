// The per-process agent thread: acts in-process when the controller wakes a slot whose wait
// cannot be a plain futex sleep (fd waits, condition variables, semaphores, program futexes,
// timers). The controller only knows shared futex words; the agent turns "slot i is due" into
// the right local action: write a thread's eventfd, broadcast a condition variable, wake a
// program futex, deliver a timer signal, start a SIGEV_THREAD callback.
//
// Started lazily on first use; blocks every signal so process-directed signals never land on it.
#pragma once

#include <vtime/internal/context.h>

#include <cstdint>

namespace vtime::detail {

struct AgentAction {
  // Called on the agent thread with the agent lock held when slot `slot` is Woken.
  void (*fn)(ProcessContext& c, uint32_t slot, void* arg, uintptr_t arg2) = nullptr;
  void* arg = nullptr;
  uintptr_t arg2 = 0;
  bool persistent = false;  // timers: stays registered; the action re-arms or disarms the slot
  // The action is lost if it comes before the waiter blocks (a condition broadcast, a futex
  // wake): repeated while the slot carries abi::kAgentRetry, until the wait ends. Actions that
  // leave a state behind (an eventfd written, a pending signal) need no repeat.
  bool lost_if_early = false;
};

// Registers an action for a slot (before the slot becomes Waiting).
void agent_add(ProcessContext& c, uint32_t slot, const AgentAction& action);
// Removes it; when this returns, the agent is not running and will not run the action.
void agent_remove(ProcessContext& c, uint32_t slot);
// Runs f with the agent lock held (timer tables use it to stay consistent with firing).
template <typename F>
void with_agent_lock(F&& f);
void agent_lock();
void agent_unlock();
// Forget every action and the thread (the child after fork has neither).
void agent_after_fork_child();

template <typename F>
void with_agent_lock(F&& f) {
  agent_lock();
  f();
  agent_unlock();
}

}  // namespace vtime::detail
