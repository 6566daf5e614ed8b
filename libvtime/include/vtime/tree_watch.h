// The kernel's own count of the wrapped tree's active threads, for idle decisions without /proc.
//
// What it is for: the controller may move the clock only when every thread of the wrapped tree is
// blocked. Reading /proc costs a few microseconds per thread per look; a tree of 200 threads
// (Slurm, a Go runtime) makes every advance cost a millisecond. A TreeWatch loads a small eBPF
// program on the scheduler's tracepoints that keeps, for the tree only, the number of threads
// that are running, queued, or being woken, plus a generation counter that moves with every
// change. The controller reads both from a shared mapping (two loads): zero active threads and an
// unchanged generation across its look at the waiter table prove the tree idle at that instant.
// Membership is by descent: the armed thread's next child and everything it forks, however it
// forks (threads, double-forked daemons, processes without the shim).
//
// Loading it needs CAP_BPF and CAP_PERFMON and a kernel with BTF (5.14+ for the states read).
// A process without them has the program loaded by the vtime-treewatch helper (beside the shim,
// given those two capabilities by the install step; $VTIME_TREEWATCH overrides its path), which
// hands it over and exits; reading it then needs Linux 6.5 or later (libvtime/src/
// tree_watch_load.h). Where none of that is possible, open() returns nullptr and the controller
// reads /proc. VTIME_IDLE=proc forces that; VTIME_IDLE=kernel makes a failure to load an error.
//
// Example:
//     std::string why;
//     auto watch = vtime::TreeWatch::open(&why, "/usr/lib/vtime");  // nullptr: why says why not
//     auto r = vtime::spawn_in_session(session, shim, argv, {}, watch.get());  // arms, forks
//     vtime::Controller ctl(session, r.pid, watch.get());
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vtime {

class TreeWatch {
 public:
  struct Counts {
    uint64_t active = 0;      // threads of the tree running, queued or being woken
    uint64_t generation = 0;  // moves with every change of `active`, every birth and death
    uint64_t exits = 0;       // threads of the tree that have exited so far
    bool complete = true;     // false once a thread of the tree could not be tracked
  };

  // Loads and attaches the program. nullptr when it cannot be used here (no privileges, no BTF,
  // built without libbpf, VTIME_IDLE=proc); `why` (if given) then holds one line saying why.
  // Throws std::runtime_error when VTIME_IDLE=kernel and it cannot be loaded.
  // `helper_dir`: where vtime-treewatch is looked for when this process lacks the capabilities
  // (the shim's directory; empty: nowhere).
  static std::unique_ptr<TreeWatch> open(std::string* why = nullptr, const std::string& helper_dir = {});
  // open(), and when the count cannot be used here (but was not turned off with VTIME_IDLE=proc)
  // one line on stderr that says so, why, and what it costs: a run never loses speed silently.
  static std::unique_ptr<TreeWatch> open_or_say(const std::string& helper_dir = {});
  ~TreeWatch();
  TreeWatch(const TreeWatch&) = delete;
  TreeWatch& operator=(const TreeWatch&) = delete;

  // The next child the calling thread creates joins the tree with everything it will create:
  // call right before fork. A tree may have several roots (one adoption per fork).
  void adopt_next_fork();
  // The last root adopted, 0 before its birth.
  pid_t root() const;
  // Generation is read first: a caller comparing two reads' generations knows nothing changed
  // between them when they are equal.
  Counts counts() const;
  // Exits number `from` to `to` - 1 (Counts::exits counts them): every exited thread into
  // `threads`, and into `processes` (once each) the process of every exit that may have ended it
  // (a leader's, or its group's last thread's). False when the kernel's record of one is gone (it
  // keeps the last 64): then any process may have ended.
  bool exited(uint64_t from, uint64_t to, std::vector<pid_t>& threads, std::vector<pid_t>& processes) const;
  // Blocks until `active` has dropped to zero since the last call (the program says so), or
  // `timeout_us` of real time passed. Returns true when woken by the program.
  bool wait_quiet(long timeout_us);
  // wait_quiet also returns when descriptor `fd` is readable (on), or no longer does (off).
  void wake_on(int fd, bool on);
  // True when process `pid` (its leader thread) belongs to the tree.
  bool watches(pid_t pid) const;
  // How many times the kernel skipped one of the program's runs so far: it runs each program at
  // most once per cpu at a time, and drops an event that comes while that program is already
  // running on the cpu (an interrupt inside it). One system call per program.
  uint64_t misses() const;

 private:
  struct Impl;
  explicit TreeWatch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vtime
