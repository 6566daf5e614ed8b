// The controller's part that decides whose turn comes first where processes are due or held
// together (the serial gate, docs/design.md "Serialised processes", and the steps of
// advance_step), and hands the tree to a process.
//
// Why not the pid: pids wrap around, and children forked at one instant by different parents
// race for them (two vtime-k8s runs on a loaded machine scheduled differently: pids had wrapped
// between the start of kubectl proxy and kube-scheduler's, so the scheduler's turn came before
// the API server's). The root first; then processes announced by the shim's fork and spawn
// wrappers or by the tracer (children of traced programs), by their rank among their parent's
// forks (start order among siblings), then lineage; processes no one announced (children of
// glibc-internal clones: system(), popen()) last, by pid.
//
// Example (the controller's loop):
//     TurnOrder turns(seg, root, proc);
//     pid_t first = turns.first_turn(due_pids);   // advance_step's next process
//     while (idle && turns.hand_over()) ...       // the serial gate at an idle point
#pragma once

#include <vtime/abi.h>
#include <vtime/internal/proc_reader.h>

#include <sys/types.h>

#include <compare>
#include <cstdint>
#include <vector>

namespace vtime::detail {

class TurnOrder {
 public:
  TurnOrder(abi::Segment& seg, const pid_t& root, ProcReader& proc) : seg_(seg), root_(root), proc_(proc) {}

  // The pid of `pids` whose turn comes first (0 when empty); the process table is read only when
  // there is a choice.
  pid_t first_turn(const std::vector<pid_t>& pids) const;
  // The serial gate at an idle point: gives the tree to the held process whose turn comes first
  // and returns true, or, with nothing held, to no process (every wake-up until the next
  // hand-over is held) and returns false. Nothing without the gate.
  bool hand_over();
  // Gives the tree to process `pid` (-1: none). `thread`: at a hand-over, the held thread of a
  // traced process whose turn it is (0: every wait of the process that ends runs, its held
  // threads wait for their turn). Nothing without the gate.
  void give_tree(pid_t pid, pid_t thread = 0);

 private:
  struct Turn {
    uint32_t rank;
    uint64_t lineage;
    pid_t pid;
    auto operator<=>(const Turn&) const = default;
  };
  Turn turn_of(pid_t pid) const;

  abi::Segment& seg_;
  const pid_t& root_;  // the controller's root (it may be set after construction)
  ProcReader& proc_;   // process names for the hand-over log only
};

}  // namespace vtime::detail
