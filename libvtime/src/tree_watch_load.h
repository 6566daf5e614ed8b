// Loading the tree watch's eBPF program and handing it over as file descriptors: what decides
// who may load it (the process itself when it has CAP_BPF and CAP_PERFMON, else the
// vtime-treewatch helper, which has only those two, as file capabilities) and what crosses from
// the helper to vtime. tree_watch.cpp uses the descriptors the same way whichever loaded them.
//
// Why descriptors: a loaded program lives as long as a descriptor of its attachments (links) is
// open, and its maps can be mapped into memory by whoever holds their descriptors, with no
// privilege. So the helper loads and attaches, sends every descriptor over a socket (SCM_RIGHTS)
// and exits; vtime, unprivileged, keeps the program alive, reads the counters and the ring by
// plain loads from its own mappings, and needs no bpf() call but the rare lookup of a process
// (watches()), which kernels since 6.5 allow on a held descriptor.
//
// The owner: the program adopts a root only from a fork by a thread of process `owner` (the
// helper's caller, read from its socket's credentials), fixed in the program's read-only data
// before it is loaded. A user granted the helper can therefore watch only trees forked by a
// process of their own choosing among their own, never another user's threads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vtime::detail {

// What a loaded program is, as descriptors (each owned by the holder, closed by close_all).
struct TreeWatchFds {
  int counters = -1;            // the .bss map (struct tree_counters), mappable
  int ring = -1;                // the ring buffer that says "active dropped to zero"
  int tasks = -1;               // the task-storage map (key: a pidfd)
  uint32_t counters_size = 0;   // the .bss map's value size
  uint32_t ring_size = 0;       // the ring buffer's data size (a power of two)
  std::vector<int> programs;    // for misses() (their run-time statistics)
  std::vector<int> links;       // the attachments: the program runs while one is open

  void close_all();
};

// Loads and attaches the program for `owner` in this process. False with `why` set when the
// kernel refuses (no privileges, no BTF) or the build has no program.
bool load_tree_watch(pid_t owner, TreeWatchFds& out, std::string& why);

// The helper's side: sends `fds` (or, when `error` is not empty, that error) over `sock`.
bool send_tree_watch(int sock, const TreeWatchFds& fds, const std::string& error);
// vtime's side: receives what send_tree_watch sent, waiting up to `timeout_ms`.
bool receive_tree_watch(int sock, int timeout_ms, TreeWatchFds& out, std::string& why);

// Sets `why` to `what` (with strerror(err) when err > 0) and returns false: how every step of
// loading and opening says why it failed.
bool fail(std::string& why, const char* what, int err);

// The file name of the helper, found beside the shim (as vtime-tracer is).
inline constexpr const char* kTreeWatchHelper = "vtime-treewatch";

}  // namespace vtime::detail
