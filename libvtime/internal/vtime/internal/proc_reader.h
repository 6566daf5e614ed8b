// Reading the kernel's view of the wrapped tree from /proc: which processes descend from the
// root, which threads they have, and for each thread its scheduler state and counters. File
// descriptors of per-thread and per-process files are kept open between scans (pread is ~1-2 us,
// open+read+close several times that), and what can only change when a task is created (the
// process tree, a process's thread list) is re-read only when the machine's fork counter moved:
// that is what keeps an idle decision cheap.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace vtime::detail {

struct ThreadSample {
  pid_t pid = 0;
  pid_t tid = 0;
  char state = '?';
  uint64_t run_ns = 0;     // schedstat: time spent on the cpu
  uint64_t slices = 0;     // schedstat: number of times it ran
  // /proc/.../syscall said "running": the kernel itself saw it on a cpu or runnable. This is the
  // exact probe: the state letter says S (or Z) a few microseconds before the task has really
  // left the cpu, and a task leaving the cpu in that window may still wake another one.
  bool running = false;
  long syscall_nr = -1;    // the blocking system call, -1 when not in one
  // With `proof` set: a thread proven blocked in one wait (the controller's sleeper proofs: a
  // sleeper or a tagged fd wait number `wait_seq`, or an agent with wait_seq 0); its counters
  // are then not read and stay 0.
  uint64_t wait_seq = 0;
  uint64_t proof = 0;      // and the id of that proof (a new proof never matches an earlier sample)
  bool operator==(const ThreadSample&) const = default;
};

// What the leader thread's stat line says about a process.
struct ProcessStatus {
  char state = 0;          // the leader's state letter ('Z' zombie)
  uint64_t start_time = 0; // clock ticks since boot: tells a process from a later one with its pid
  long threads = 0;        // threads in the thread group
};

class ProcReader {
 public:
  ProcReader() = default;
  ~ProcReader();
  ProcReader(const ProcReader&) = delete;
  ProcReader& operator=(const ProcReader&) = delete;

  // The machine's fork counter (/proc/stat "processes": every clone since boot, threads
  // included; it never goes back). 0 when unreadable, which disables every cache keyed on it.
  // Read it before the caches it validates: a task created after the read moves it for the next.
  uint64_t forks();
  // Descendants of any pid in `roots` (found through the ppid of every process on the machine).
  // With the same non-zero `forks` as the previous call, /proc is not read again: no task was
  // created anywhere since, so no process can have joined the tree; only the closure over the
  // remembered parents is recomputed (the roots may differ).
  std::vector<pid_t> descendants(const std::unordered_set<pid_t>& roots, uint64_t forks = 0);
  // State of process pid through a descriptor on its leader's stat kept open. false when the
  // process is gone (reaped). A kept descriptor stays bound to the process it was opened on, so
  // after the pid is reused it fails and is reopened on the new process.
  bool process_status(pid_t pid, ProcessStatus& out);
  // The process's name (/proc/PID/comm) through a descriptor kept open like the stat one, read
  // anew each time (exec renames); "" when the process is gone.
  std::string process_name(pid_t pid);
  // Thread ids of pid. Re-listed only when `forks` (non-zero) or the thread count `threads`
  // (from process_status) differs from the previous listing: a new thread moves the fork
  // counter, an exit lowers the count (an exit plus a creation moves the counter). false when
  // the process is gone.
  bool thread_ids(pid_t pid, uint64_t forks, long threads, std::vector<pid_t>& out);
  // Appends one full sample per thread of pid (uncached listing). Returns false if it is gone.
  bool sample_threads(pid_t pid, std::vector<ThreadSample>& out);
  // One full sample of a thread: stat, schedstat, then syscall. false if the thread is gone.
  bool sample(pid_t pid, pid_t tid, ThreadSample& s);
  // The thread's /proc/.../syscall line without its newline: "running", or the system call
  // number, its six arguments, the stack and instruction pointers. Returns the length, or -1.
  int syscall_line(pid_t pid, pid_t tid, char* buf, size_t cap);
  // The thread's state letter from its stat file, 0 if it is gone. Unlike the syscall line it
  // shows a wake-up in flight: a task being woken on another cpu (TASK_WAKING, queued until that
  // cpu takes its interrupt) reads 'R' here while its syscall line still shows the old call.
  char thread_state(pid_t pid, pid_t tid);
  // Closes the cached descriptors of threads not in `live_tids` and of processes not in
  // `live_pids`.
  void prune(const std::unordered_set<pid_t>& live_tids, const std::unordered_set<pid_t>& live_pids);
  // Closes the cached descriptors of one thread that is gone (a caller that learns of each exit).
  void forget_thread(pid_t tid);
  // State letter of a process ('Z' zombie), or 0 when it does not exist (opens the file anew).
  static char process_state(pid_t pid, uint64_t* start_time = nullptr, pid_t* ppid = nullptr);
  static std::string read_small(const std::string& path);

 private:
  struct ThreadFds {
    int stat = -1;
    int schedstat = -1;
    int syscall = -1;
  };
  struct ProcessEntry {
    int stat = -1;              // /proc/PID/task/PID/stat
    int comm = -1;              // /proc/PID/task/PID/comm (process_name)
    std::vector<pid_t> tids;    // last listing
    uint64_t listed_forks = 0;  // fork counter read before that listing (0: never listed)
    long listed_threads = -1;   // thread count read before that listing
  };
  struct PpidEntry {
    uint64_t ino;  // inode number of the /proc/PID directory entry: new for each process
    pid_t ppid;
  };
  // File `name` of the leader's task directory through the entry's kept descriptor `fd`
  // (reopened once if it is bound to a process that is gone); its length, or -1 when the
  // process is gone (the entry is dropped).
  ssize_t read_leader_file(pid_t pid, int ProcessEntry::*fd, const char* name, char* buf, size_t cap);
  static void close_process(ProcessEntry& e);
  bool open_thread(pid_t pid, pid_t tid, ThreadFds& f);
  static void close_thread(ThreadFds& f);
  std::unordered_map<pid_t, ThreadFds> fds_;
  std::unordered_map<pid_t, ProcessEntry> procs_;
  std::unordered_map<pid_t, PpidEntry> ppid_cache_;  // pid -> parent of processes seen on the last scan
  uint64_t ppid_forks_ = 0;                          // fork counter read before that scan
  int stat_fd_ = -1;                                 // /proc/stat
};

}  // namespace vtime::detail
