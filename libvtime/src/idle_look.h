// The controller's part that decides whether the wrapped tree is idle at this instant: no thread
// of it runs or can run before virtual time moves, every wake-up of ours was handled, and no
// process is being registered. Two rules decide: the kernel's count of the tree's active threads
// (TreeWatch, one look), or, without it, two scans of /proc with nothing changed between them
// (the loop in controller.cpp asks for the scans and compares them). Each rule's argument is
// below, under "Proofs" and "Kernel count"; docs/shim.md "Idle detection" says it for users.
//
// Example (the controller's loop):
//     IdleLook look(seg, members, proc, notify, watch);
//     if (look.kernel_count()) idle = look.kernel_look(&busy_active, &unconsumed);
//     else { Snapshot a = look.scan(false, act), b = look.scan(true, act); idle = a == b; }
//
// Proofs: how a decision avoids the three /proc reads for threads known to wait in our code
// (sleeper_proofs.h makes them).
//
// The general rule reads stat, schedstat and syscall of every thread in both scans of a
// decision. Three kinds of threads are proven blocked more cheaply. A proof made at time V lets
// the candidate scan skip the thread entirely; the confirming scan re-checks it (SleeperProofs::proven). When
// the check passes, the thread ran no user code since V and so woke nobody: the decision treats
// it like a thread whose counters did not change. Proven threads are read first: a thread that a
// proven one could have woken before its own read is then read after it, and one woken after
// its read by another thread of the tree is caught through that thread (its counters moved
// between the two scans, and so on back to a cause outside the tree, which no scan can see).
//
// Futex proofs (sleepers and agents). A "sleeper" is a thread whose only pending wait is one
// thread slot in state Waiting with kWakeFutex: it blocks in sleep_on() on its process's sleep
// word (abi::ProcessSlot) until the controller (or, for a rwlock, an unlocking thread of its
// process) bumps its slot's word and wakes its bit. An agent (its tid published in its
// ProcessSlot) blocks in wait_word() on agent_word, where no other task ever waits. The check:
// the task is queued on its word (an agent: futex_waiters() finds exactly one task there; the
// sleepers of a process: as many tasks queued on the sleep word as the scan counted sleepers,
// see SleeperProofs::sleepers_queued), then the thread's state letter is not running, then the slot (seq,
// word) or agent word is still the same. Between V and that check the thread can only have left
// its futex call for: a wake-up of its own (its slot is Woken or its slot word moved: seen); the
// 1 s heartbeat, a spurious return or another slot's bit (the wait loop re-queues it without
// running user code or waking anyone); a signal, whose handler is user code: the wait returns
// EINTR and ends (the slot leaves Waiting; a new wait has a new seq), while the handler runs the
// state is 'R', and a handler that blocks leaves the futex queue. The state
// letter is read because a wake-up sent to a task on another cpu is queued until that cpu takes
// its interrupt (TASK_WAKING): meanwhile a signalled task is still queued on the futex and its
// syscall line is unchanged, but stat already says 'R'. A thread stopped alone by a debugger
// ('t') or with its process ('T') reads as running, which holds the clock.
//
// Tagged proofs (fd waits). A thread in an intercepted fd wait (poll/ppoll/epoll families, with
// or without a virtual timeout, once in the real call) blocks in ppoll or epoll_pwait with no
// signal mask and abi::kTaggedWaitMark | its slot's seq in the ignored mask-size argument
// (fd_wait.h). The seq is unique in the session and the scope makes one such call, so a
// /proc/TID/syscall line naming it is that wait's own call, and two equal reads (the kernel
// answers only once the task is off the cpu and not runnable) saw the thread inside one and the
// same call: leaving it for any reason makes the wait end (new seq). A kernel-internal wake-up
// that finds nothing ready goes back to sleep inside the call without running user code. The
// state letter is read as for futex proofs. A new proof counts only once a later read shows the
// same line (its new id makes the scan differ from every earlier one).
//
// Kernel count (TreeWatch, where the kernel lets us load its program). The program keeps, for the
// tree only, the number of threads that are on a cpu, queued for one, or being woken, and a
// generation that moves with every change of that number (libvtime/bpf/tree_watch.bpf.c says
// exactly when a thread counts). A decision reads (generation, count), then the waiter and
// process tables, then (generation, count) again: both counts zero and one generation mean that
// for the whole look no thread of the tree ran or was queued, so nothing in the tree could change
// a table or wake anything, and the tables read are the idle state. The /proc rule's two scans
// exist to see a thread run between reads; the generation sees every such run. What the tables
// still decide: a Woken slot (a wake-up of ours not yet handled: its thread is already counted
// from the wake-up on, but the slot is checked as in the /proc rule), a process slot being filled
// in, and slots of threads that died (looked for in /proc only when the program counted an exit).
// Membership is by descent from the root, so a registered process the program does not watch
// (it cannot happen through fork, but a process could attach by other means) sends the session
// back to the /proc rule for good, as does a thread the program could not track.
// The broker's own threads (watch_own_threads) are not in the tree: they are read from /proc as
// before, twice per look, and must show the same counters both times.
// Like the /proc rule, the count cannot see a wake-up that a cause outside the tree has decided
// but not begun (a signal sent from outside, a packet the kernel defers to ksoftirqd).
#pragma once

#include <vtime/abi.h>
#include <vtime/log.h>
#include <vtime/internal/proc_reader.h>

#include "sleeper_proofs.h"
#include "tree_members.h"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace vtime {
class TreeWatch;
namespace detail {

class NotifiedSleeps;

// What the waiting side and the tracer publish in the header, read at both ends of an idle
// decision: the activity counter (every wait entry, exit and registration) and the tracer's reap
// counter (abi::Header::tracer_reaps, odd while it takes an exit). A decision holds when both ends
// read the same marks and no reap was under way.
struct Marks {
  uint64_t activity = 0;
  uint32_t reaps = 0;
  static Marks read(const abi::Header& h) {
    return {h.activity.load(std::memory_order_seq_cst), h.tracer_reaps.load(std::memory_order_seq_cst)};
  }
  bool settled() const { return (reaps & 1) == 0; }
  bool operator==(const Marks&) const = default;
};

// One /proc scan of the tree. Two equal quiet snapshots with the same marks make a decision.
struct Snapshot {
  std::vector<ThreadSample> threads;
  std::vector<pid_t> pids;
  bool busy = false;
  uint32_t unconsumed = 0;  // Woken slots: wake-ups the tree has not handled yet
  bool operator==(const Snapshot& o) const { return threads == o.threads && pids == o.pids; }
};

class IdleLook {
 public:
  // `watch`: the kernel count, when it adopted the tree's root (nullptr: the /proc rule).
  IdleLook(abi::Segment& seg, TreeMembers& members, ProcReader& proc, NotifiedSleeps& notify, TreeWatch* watch)
      : seg_(seg), members_(members), proc_(proc), notify_(notify), watch_(watch), proofs_(seg, proc) {}

  // The kernel count, while it decides (nullptr once given up, or from the start).
  TreeWatch* kernel_count() const { return watch_; }
  // One look with the kernel count (see "Kernel count"). Returns true when the tree is idle;
  // otherwise *busy_active says whether threads of the tree were active (the program then
  // signals their end), *unconsumed counts our wake-ups not handled yet.
  bool kernel_look(bool* busy_active, uint32_t* unconsumed);
  // One /proc scan. A busy snapshot may stop early: it is thrown away. `confirming`: this scan
  // may end the decision (the previous one was not busy). `activity`: the activity counter read
  // just before; a scan that sees it move stops.
  Snapshot scan(bool confirming, uint64_t activity);
  // The loop's verdict on the last scan (busy, or its marks moved): see scan's fork counter.
  void set_last_scan_busy(bool busy) { last_scan_busy_ = busy; }
  // The /proc rule's own confirmation (two scans with nothing between them), asked while the
  // kernel count still decides: true when it sees the whole tree asleep.
  bool proc_sees_tree_asleep();
  // From now on the /proc rule decides (logged at `level`, with `why`).
  void give_up_kernel_count(const char* why, LogLevel level = LogLevel::kWarn);
  // After the program counted exits: frees the slots of dead processes and threads, as a /proc
  // scan does when it finds them missing.
  void reclaim_dead();
  // Waits of the tracer whose thread has left its call end (see idle_look.cpp). Idle points only.
  void drop_ended_tracer_waits();
  // Reads the controller's own threads too (Controller::watch_own_threads).
  void watch_own_threads(bool on) { watch_self_ = on; }
  uint64_t scans() const { return scans_; }

 private:
  struct Listed {
    pid_t pid;
    pid_t tid;
  };
  // The parts of a scan.
  void list_threads(Snapshot& snap, uint64_t forks, std::vector<Listed>& listed, std::unordered_set<pid_t>& tids,
                    std::unordered_set<pid_t>& live_pids);
  void read_waiters(Snapshot& snap, const std::unordered_set<pid_t>& tids, std::unordered_map<pid_t, int64_t>& sleep_slot);
  void prove(const std::vector<Listed>& listed, const std::unordered_map<pid_t, int64_t>& sleep_slot,
             const std::unordered_set<pid_t>& live_pids, bool confirming, Snapshot& snap, std::vector<Listed>& others);
  bool read_in_full(const std::vector<Listed>& others, uint64_t activity, Snapshot& snap);
  // The kernel look's checks of exits and registrations; false: not idle now.
  bool exits_settled(uint64_t exits);
  // reclaim_dead for the processes in `ended` and the threads in `exited` alone (each nullptr:
  // every one).
  void reclaim(const std::vector<pid_t>* ended, const std::vector<pid_t>* exited);
  bool registered_watched();
  bool sample_own_threads(std::vector<ThreadSample>& out);
  bool trace_request_pending();
  // With the kernel count, while no thread of the tree is active: its generation and the marks.
  // Two equal readings mean no thread of the tree ran between them.
  std::optional<std::pair<uint64_t, Marks>> quiet_point() const;

  abi::Segment& seg_;
  TreeMembers& members_;
  ProcReader& proc_;
  NotifiedSleeps& notify_;
  TreeWatch* watch_;
  SleeperProofs proofs_;
  bool watch_self_ = false;
  uint64_t scans_ = 0;
  uint64_t last_forks_ = 0;     // the fork counter as the last scan that read it found it (see scan)
  bool last_scan_busy_ = true;  // the last scan found the tree busy (or there was none)
  uint64_t reclaimed_exits_ = ~0ull;        // the exit count at the last look for dead threads
  std::vector<pid_t> exited_;               // exits_settled: the threads the kernel saw exit,
  std::vector<pid_t> ended_;                //   and the processes that may have ended with them
  std::unordered_set<pid_t> watched_pids_;  // registered processes the watch is known to cover
  std::vector<ThreadSample> own_before_;    // the broker's own threads at the start of a look
  // drop_ended_tracer_waits: the count's generation and the marks when a pass found nothing that
  // could change before the tree runs again (see there); none yet.
  std::optional<std::pair<uint64_t, Marks>> tracer_waits_checked_;
};

}  // namespace detail
}  // namespace vtime
