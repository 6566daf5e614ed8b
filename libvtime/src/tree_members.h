// The controller's part that decides who belongs to the wrapped tree: the root, the processes
// registered in the process table and their descendants. It frees the slots of processes and
// threads that died (they can never be consumed), and says when the root's or a traced
// process's exit is still on its way (the tree is not done with it).
//
// Why a part of its own: the idle look, the tree report and the CPU-time model all need the
// tree's pids, and the pids are only right once dead processes' slots are reclaimed.
//
// Example (the idle look):
//     TreeMembers members(seg, root, proc);
//     for (pid_t pid : members.pids()) ...           // root, registered, descendants, sorted
//     if (members.root_exiting()) return false;     // its exit is on its way to the owner
#pragma once

#include <vtime/abi.h>
#include <vtime/internal/proc_reader.h>

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace vtime::detail {

class TreeMembers {
 public:
  TreeMembers(abi::Segment& seg, pid_t root, ProcReader& proc) : seg_(seg), root_(root), proc_(proc) {}

  pid_t root() const { return root_; }
  // Reclaims dead registered processes; returns the live ones (status in *status) plus the root,
  // and sets *registering when a process slot is being filled in.
  std::unordered_set<pid_t> live_roots(std::unordered_map<pid_t, ProcessStatus>* status, bool* registering);
  // The same for the registered processes among `ended` alone (the kernel saw them end).
  void reclaim_ended(const std::vector<pid_t>& ended);
  // Every process of the tree, sorted: live_roots and their descendants.
  std::vector<pid_t> pids();
  // Frees waiter slot i, a thread's, when its thread no longer exists (it can never be consumed).
  // false when the thread is still there.
  bool free_if_thread_gone(uint32_t i);
  // Frees the waiter slots of every thread that no longer exists (timers belong to processes);
  // with `only`, of those threads alone (the ones the kernel saw exit).
  void free_gone_threads(const std::vector<pid_t>* only = nullptr);
  // The root's exit is on its way to the owner, which reaps it as soon as the kernel lets it.
  bool root_exiting();
  // Thread `tid` is a zombie a tracer has not reaped yet (only asked of zombies).
  bool traced_zombie(pid_t tid);
  // The controller's own process's threads but the one calling (Controller::watch_own_threads),
  // listed with the fork counter `forks`. false when they cannot be listed.
  bool own_thread_ids(uint64_t forks, std::vector<pid_t>& out);

 private:
  // Frees process slot p (its process `pid` is dead or a zombie) and every slot it owned.
  void reclaim(abi::ProcessSlot& p, pid_t pid, char st);
  // Whether registered process p (`pid`) still runs (its status in ps); reclaims it if not.
  bool still_live(abi::ProcessSlot& p, pid_t pid, ProcessStatus& ps);

  abi::Segment& seg_;
  pid_t root_;
  ProcReader& proc_;
};

}  // namespace vtime::detail
