// Read-only views of a session's tables for recorders: pending timed waits, registered
// processes, per-process clock reads.
//
// What it is for: the broker records a decision trace (docs/trace-format.md). At each moment the
// wrapped tree is idle it looks at what is armed, who exists and how much each process read the
// clock; these functions give it that without exposing the shared-memory layout.
//
// Example:
//     for (const vtime::PendingWait& w : vtime::pending_waits(session))
//       printf("%d.%d waits until %lld\n", w.pid, w.tid, (long long)w.deadline.ns());
#pragma once

#include <vtime/session.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vtime {
namespace detail {
class ProcReader;
}  // namespace detail

struct PendingWait {
  pid_t pid = 0;
  pid_t tid = 0;               // the waiting thread; 0 for a timer owned by the process
  uint32_t reason = 0;         // abi::Reason; reason_name() (controller.h) names it
  TimePoint deadline;
  uint64_t seq = 0;            // unique per wait: registration order in the session
};
// Every wait with a finite deadline that has not been woken yet, in (deadline, seq) order.
std::vector<PendingWait> pending_waits(Session& s);

struct RegisteredProcess {
  pid_t pid = 0;
  pid_t parent = 0;
  uint64_t lineage = 0;  // abi::ProcessSlot::lineage: names the process independently of pids
};
// Processes registered in the session (attached, or announced by their parent at fork).
std::vector<RegisteredProcess> registered_processes(Session& s);

struct ClockReads {
  uint64_t reads = 0;
  uint64_t digest = 0;  // sum of the threads' FNV-1a digests: independent of their interleaving
};
// Clock reads per registered process. Threads whose name (/proc/.../comm) matches one of the
// fnmatch(3) patterns are left out, now and when they exit; a pattern "proc:P" leaves out every
// read of the processes whose name matches P (a resource manager's daemons, whose number of
// clock reads depends on how their threads interleave). Entries of threads of processes
// that are gone are given back. Call it while the tree is idle: counts are written without
// synchronisation by their threads.
//
// `names`, if given, keeps a descriptor of each process's stat open between calls: a recorder
// asks at every idle point, and opening /proc/PID/comm each time was most of a long recorded run
// (a Slurm run: 26 s of system time in 35 s). The name is still read at every call (it changes
// with exec); a descriptor whose process is gone reads nothing and is opened again (a reused pid
// is another process: its old descriptor fails too).
class ProcessNames {
 public:
  ProcessNames();
  ~ProcessNames();
  ProcessNames(const ProcessNames&) = delete;
  ProcessNames& operator=(const ProcessNames&) = delete;
  std::string get(pid_t pid);
  // Closes the descriptors of processes not in `live`.
  void keep_only(const std::vector<pid_t>& live);

 private:
  std::unique_ptr<detail::ProcReader> reader_;  // the controller's /proc reader, its kept descriptors
};
std::map<pid_t, ClockReads> clock_reads(Session& s, const std::vector<std::string>& ignored_thread_names,
                                        ProcessNames* names = nullptr);

}  // namespace vtime
