// Reading the kernel's view of the wrapped tree from /proc: which processes descend from the
// root, which threads they have, and for each thread its scheduler state and counters. File
// descriptors of per-thread files are kept open between scans (pread is ~1 us, open+read+close
// several times that), which is what keeps an idle decision cheap.
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
  bool operator==(const ThreadSample&) const = default;
};

class ProcReader {
 public:
  ProcReader() = default;
  ~ProcReader();
  ProcReader(const ProcReader&) = delete;
  ProcReader& operator=(const ProcReader&) = delete;

  // Descendants of any pid in `roots` (found through the ppid of every process on the machine).
  std::vector<pid_t> descendants(const std::unordered_set<pid_t>& roots);
  // Appends one sample per thread of pid. Returns false if the process is gone.
  bool sample_threads(pid_t pid, std::vector<ThreadSample>& out);
  // State letter of a process ('Z' zombie), or 0 when it does not exist.
  // Closes the cached descriptors of threads not in `live`.
  void prune(const std::unordered_set<pid_t>& live);
  static char process_state(pid_t pid, uint64_t* start_time = nullptr, pid_t* ppid = nullptr);
  static std::string read_small(const std::string& path);

 private:
  struct ThreadFds {
    int stat = -1;
    int schedstat = -1;
    int syscall = -1;
  };
  bool sample_one(pid_t pid, pid_t tid, ThreadSample& s);
  std::unordered_map<pid_t, ThreadFds> fds_;
  std::unordered_map<pid_t, pid_t> ppid_cache_;  // pid -> ppid of processes seen on the last scan
};

}  // namespace vtime::detail
