// The controller's part that decides, at an advance, which pending waits are due and in which
// order they are woken, and wakes them with as few wake-ups as it can: one per agent, one
// FUTEX_WAKE_BITSET per process for its sleepers, one signal to the tracer for its threads'
// calls, and an answer for the sleeps the controller took over (notify_sleeps.h).
//
// Why it matters: advance_step (controller.h) lets one process run at a time at an instant, in
// the turn order, so that processes due together run one after another in an order that does not
// depend on real-time races; the serial gate then holds the rest. The waker chooses that step's
// waiters; the loop asks the turn order whose turn comes first and gives it the tree.
//
// Example (the controller's loop):
//     Waker waker(seg, notify, [&](const std::vector<pid_t>& p) { return turns.first_turn(p); });
//     Waker::Plan p = waker.plan(t, one_process);
//     if (p.give_to) turns.give_tree(*p.give_to);
//     int woken = waker.wake(t, one_process, p.serial, look.kernel_count() != nullptr);
#pragma once

#include <vtime/abi.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace vtime::detail {

class NotifiedSleeps;

class Waker {
 public:
  // Of some processes, the one whose turn comes first (the turn order's, given by the loop).
  using FirstTurn = std::function<pid_t(const std::vector<pid_t>&)>;
  Waker(abi::Segment& seg, NotifiedSleeps& notify, FirstTurn first_turn)
      : seg_(seg), notify_(notify), first_turn_(std::move(first_turn)) {}

  // What plan() decided: whether the serial gate is on (read after the table: a process may turn
  // it on and then arm a wait), and the process the gate gives the tree to (something due).
  struct Plan {
    bool serial = false;
    std::optional<pid_t> give_to;
  };
  // Finds the waits due at `t` and puts them in waking order. `one_process` (advance_step): only
  // the earliest deadline's, of the process whose turn comes first, with the housekeeping waits
  // due by then (Go's sysmon: keep_first_step says which go with it).
  Plan plan(TimePoint t, bool one_process);
  // Wakes what plan() found; returns how many waits it woke (housekeeping of traced runtimes not
  // counted). `kernel_count`: the kernel count decides idleness (a direct sleep can then end at
  // once). `one_process` as given to plan(), `serial` as it found.
  int wake(TimePoint t, bool one_process, bool serial, bool kernel_count);

 private:
  struct Due {
    int64_t deadline;
    uint64_t seq;
    uint32_t index;
    uint32_t process;
    pid_t pid;
    bool housekeeping;
    bool traced;  // a traced thread's (abi::kWakeTracer)
  };
  // advance_step's choice: keeps only the first step's waiters; returns its process.
  pid_t keep_first_step(bool serial);
  // Of the due waiters `pick` keeps, the process whose turn comes first.
  template <class Pick>
  pid_t first_turn_among(Pick pick);
  // One deadline's group, due_[g, end): marks each slot Woken, then wakes agents and sleepers.
  int wake_group(size_t g, size_t end, TimePoint t, bool one_process, bool serial, bool kernel_count);
  // A due wait of the tracer's (abi::kWakeTracer) whose slot is Waking: answered, woken directly,
  // or left Woken for the tracer to interrupt (tracer_due_). Returns what it counts as woken.
  int wake_tracer_wait(abi::WaiterSlot& w, const Due& d, bool serial, bool kernel_count);

  abi::Segment& seg_;
  NotifiedSleeps& notify_;
  FirstTurn first_turn_;
  // Kept between advances: no allocation per advance.
  std::vector<Due> due_;
  std::vector<pid_t> pids_;
  std::vector<std::pair<uint32_t, uint32_t>> sleepers_;  // process slot, bits to wake
  std::vector<uint32_t> agents_;                         // process slots whose agent must run
  bool tracer_due_ = false;                              // waits of the tracer's threads are due
};

}  // namespace vtime::detail
