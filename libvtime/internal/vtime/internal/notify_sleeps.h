// Notified sleeps: the controller's part (abi::kTracerNotify, docs/tracer.md "Notified sleeps").
//
// A traced image's clock_nanosleep on a virtual clock reaches the controller as a seccomp user
// notification; the thread waits in the kernel until it is answered. The controller takes the
// notifications before every idle decision (take), gives each sleep a waiter slot with its
// virtual deadline, and answers at the deadline (answer): the call returns 0. The kernel runs
// the answered thread on the answering cpu (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), and the
// notification wakes a waiting controller on the sleeper's cpu: a sleep is two same-cpu
// hand-offs, with no ptrace stop, where the tracer's own sleeps cost two stops and a
// cross-process hand-off more.
//
// Example (the controller's idle decision and advance):
//     NotifiedSleeps notify(seg);
//     notify.take(watch);                  // before deciding that the tree is idle
//     ...
//     if (slot is kTracerNotify) sent = notify.answer(index);
#pragma once

#include <string>

#include <vtime/abi.h>

#include <linux/types.h>
#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace vtime {
class TreeWatch;
}

namespace vtime::detail {

// Whether this kernel takes the notify filter with a listener and the synchronous wake-up
// (Linux 6.6), and lets a process take another's descriptor (pidfd_getfd, which a container's
// seccomp profile may refuse): tried, the filter in a short-lived child (about a millisecond).
// When not, `why` says which is missing.
bool notify_sleeps_supported(std::string* why = nullptr);

class NotifiedSleeps {
 public:
  explicit NotifiedSleeps(abi::Segment& seg) : seg_(seg) {}
  ~NotifiedSleeps();
  NotifiedSleeps(const NotifiedSleeps&) = delete;
  NotifiedSleeps& operator=(const NotifiedSleeps&) = delete;

  // Adopts the listeners the tracer published and takes every pending notification: a new
  // sleep gets a Waiting slot, a sleep the kernel restarted (after a signal no handler took)
  // keeps its slot and deadline, a sleep already due is answered at once. `watch` (may be null)
  // is woken by the listeners from then on. True when the waiter table changed.
  bool take(TreeWatch* watch);
  // Answers the notified sleep of slot `index` (its call returns 0) and forgets it: kAnswered.
  // kGone when its notification is gone (a signal ended the wait in the kernel): the slot stays
  // (Woken), and the restarted call is answered when it comes. kUnknown: not a sleep of ours.
  enum class Answer { kAnswered, kGone, kUnknown };
  Answer answer(uint32_t index);
  bool active() const { return !listeners_.empty(); }
  uint64_t answered() {
    std::lock_guard<std::mutex> lock(mu_);
    return answered_;
  }
  // Threads of the tree exited: their ids may come back in other processes.
  void threads_exited();

 private:
  struct Listener {
    int fd = -1;
    uint32_t entry = 0;          // its abi::Header::notify_listeners index
    TreeWatch* watch = nullptr;  // woken by it
  };
  struct Sleep {
    int fd = -1;      // the listener it came through
    uint64_t id = 0;  // its notification
    uint64_t seq = 0;
    pid_t tid = 0;
    bool pending = false;  // a notification waits for the answer
    bool used = false;     // a sleep in flight: the rest is meaningful
    int copy = -1;         // an epoll wait: its descriptor's copy, an index in copies_
    pid_t pid = 0;         // an epoll wait's process, its events array, its size
    uint64_t events = 0;
    int maxevents = 0;
    bool answered = false;  // an epoll wait answered with events: its slot kept (kTracerAnswered)
  };
  // A Go image's epoll descriptor (number `prog_fd` in process `pid`) through the controller's own
  // copy of it (pidfd_getfd: the same open epoll), which is readable when the program's epoll set
  // has events, without taking them (a nested epoll).
  struct Copy {
    pid_t pid = 0;
    int prog_fd = -1;
    int fd = -1;         // -1: a free entry
    uint32_t waits = 0;  // epoll waits in flight on it
  };

  void adopt(TreeWatch* watch);
  void retire(size_t i);
  bool take_one(int fd, TreeWatch* watch);
  // Registers a Waiting slot of ours (kTracerNotify | `flags`) for thread `tid` of process `pid`,
  // with the timer slack's range `early` (abi::WaiterSlot::early_ns); kNoSlot if there is none.
  uint32_t register_slot(pid_t pid, pid_t tid, int64_t deadline, int64_t early, uint32_t reason, uint32_t flags,
                         bool realtime, int64_t shift);
  void keep(uint32_t index, const Sleep& sl);
  // After registering: the notification still pending (see take_one)? If not, the slot goes.
  bool still_pending(int fd, uint64_t id, uint32_t index, const std::optional<uint64_t>& quiet, TreeWatch* watch);
  // A Go poller's epoll wait (its arguments `a`): a slot with its deadline, and its descriptor
  // watched; once the descriptor is ready the controller takes the events for it
  // (release_copy), and at the deadline the call returns 0.
  bool take_epoll(int fd, uint64_t id, pid_t pid, pid_t tid, const __u64* a, const std::optional<uint64_t>& quiet,
                  TreeWatch* watch);
  int copy_of(pid_t pid, int prog_fd);
  // The watcher hears of copy `i`'s readiness once (EPOLLONESHOT), from now.
  void arm(size_t i);
  // The epoll waits on copy `i` run: its descriptor is ready. True if one did. A wait whose slot
  // the controller is deciding on (Waking) is left, its index in *waking.
  bool release_copy(size_t i, int* waking);
  // Releases the waits of every ready copy (a look that does not block): true if one ran.
  bool release_ready();
  // The watcher thread: releases the waits of a copy as soon as it is ready, wherever the
  // controller waits, and wakes it (a wait on the program's activity does not see descriptors).
  void watch_copies();
  void close_copies(bool all);  // those no wait uses, or all
  void close_copy(Copy& c);
  // Drops the sleeps whose slot moved on (the tracer ended it, its thread died); frees the slots
  // the tracer ended.
  void forget_ended();
  // The sleep in flight in waiter slot `index`, or nullptr.
  Sleep* sleep_at(uint32_t index) { return index < sleeps_.size() && sleeps_[index].used ? &sleeps_[index] : nullptr; }
  void drop(uint32_t index);
  // Frees waiter slot `s` if it is still in state `from` (the controller's to free: its sleep
  // was answered or ended).
  static void free_if(abi::WaiterSlot& s, uint32_t from);
  static bool send(int fd, uint64_t id, int64_t val, int32_t error, uint32_t flags);
  pid_t process_of(pid_t tid);
  // The timespec at `addr` in thread `tid` of process `pid` (0: unknown), in ns; -1 when
  // unreadable or invalid (the kernel answers EFAULT or EINVAL itself).
  int64_t read_timespec(pid_t pid, pid_t tid, uint64_t addr);
  void close_mem_files();
  // The /proc/<pid>/mem of process `pid`, opened on first use (-1 if it cannot be).
  int mem_file(pid_t pid);
  // Writes `len` bytes at `addr` in thread `tid` of process `pid`.
  bool write_mem(pid_t pid, pid_t tid, uint64_t addr, const void* buf, size_t len);

  abi::Segment& seg_;
  std::vector<Listener> listeners_;
  int epoll_ = -1;        // the listeners, for a look without blocking
  int tracer_pidfd_ = -1;
  // By waiter slot, and a thread's slot (stale entries are told by Sleep::tid; all go when
  // threads exit): no allocation per sleep.
  std::vector<Sleep> sleeps_;
  uint32_t in_flight_ = 0;
  std::unordered_map<pid_t, uint32_t> slot_of_tid_;
  std::unordered_map<pid_t, pid_t> process_of_;  // tid -> its process
  // process -> its /proc/<pid>/mem, kept open: a pread there costs less than process_vm_readv,
  // whose access check comes with every call (~0.5 us of a ~10 us notified sleep).
  std::unordered_map<pid_t, int> mem_of_;
  std::vector<char> request_;  // a struct seccomp_notif as this kernel sizes it
  // The count's generation at the start of the last take() that took every notification
  // pending then (no thread active): see take().
  std::optional<uint64_t> taken_at_;
  uint64_t answered_ = 0;
  // Epoll waits: the copies, one epoll set the controller looks at without blocking (level-
  // triggered: a ready copy stays reported until the program takes its events) and one the
  // watcher thread blocks on (one report per arming), with an eventfd that stops it. The watcher and
  // the controller's thread share everything above under mu_.
  std::vector<Copy> copies_;
  uint32_t epoll_waits_ = 0;
  int copies_look_ = -1;
  int copies_watch_ = -1;
  int stop_ = -1;
  std::thread watcher_;
  std::mutex mu_;
};

}  // namespace vtime::detail
