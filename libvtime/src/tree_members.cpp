// Who belongs to the wrapped tree (see tree_members.h).
#include "tree_members.h"

#include <vtime/log.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace vtime::detail {

bool TreeMembers::own_thread_ids(uint64_t forks, std::vector<pid_t>& out) {
  pid_t self = getpid();
  pid_t me = gettid_raw();
  ProcessStatus ps;
  if (!proc_.process_status(self, ps) || !proc_.thread_ids(self, forks, ps.threads, out)) return false;
  std::erase(out, me);
  return true;
}

bool TreeMembers::free_if_thread_gone(uint32_t i) {
  auto& w = seg_.waiters[i];
  char path[96];
  snprintf(path, sizeof path, "/proc/%d/task/%d", w.pid.load(), w.tid.load());
  if (access(path, F_OK) == 0) return false;
  VTIME_LOGF("controller", LogLevel::kDebug, "thread %d (pid %d) is gone: freeing slot %d", w.tid.load(), w.pid.load(),
             static_cast<int>(i));
  free_slot(w);
  return true;
}

void TreeMembers::free_gone_threads(const std::vector<pid_t>* only) {
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    uint32_t st = w.state.load(std::memory_order_acquire);
    if ((st != abi::kWaiting && st != abi::kWoken) || w.is_timer.load() != 0) continue;
    if (only && std::find(only->begin(), only->end(), w.tid.load()) == only->end()) continue;
    free_if_thread_gone(i);
  }
}

void TreeMembers::reclaim(abi::ProcessSlot& p, pid_t pid, char st) {
  VTIME_LOGF("controller", LogLevel::kDebug, "process %d is gone (state %c): reclaiming its slots", pid, st ? st : '-');
  p.state.store(abi::kProcessFree, std::memory_order_release);
  for (uint32_t i = 0, n = waiter_limit(seg_); i < n; ++i) {
    auto& w = seg_.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kFree && w.pid.load() == pid) {
      VTIME_LOGF("controller", LogLevel::kDebug, "  slot %d (tid %d, state %u, deadline %lld) freed",
                 static_cast<int>(&w - seg_.waiters), w.tid.load(), w.state.load(),
                 static_cast<long long>(w.deadline.load()));
      free_slot(w);
    }
  }
}

std::unordered_set<pid_t> TreeMembers::live_roots(std::unordered_map<pid_t, ProcessStatus>* status, bool* registering) {
  std::unordered_set<pid_t> roots{root_};
  for (uint32_t i = 0, n = process_limit(seg_); i < n; ++i) {
    auto& p = seg_.processes[i];
    uint32_t st = p.state.load(std::memory_order_acquire);
    if (st == abi::kProcessFree) continue;
    pid_t pid = p.pid.load();
    if (st == abi::kProcessFilling) {  // not idle, and its pid may not be written yet
      if (registering) *registering = true;
      roots.insert(pid);
      continue;
    }
    ProcessStatus ps;
    if (!still_live(p, pid, ps)) continue;
    roots.insert(pid);
    if (status) (*status)[pid] = ps;
  }
  return roots;
}

bool TreeMembers::still_live(abi::ProcessSlot& p, pid_t pid, ProcessStatus& ps) {
  bool alive = proc_.process_status(pid, ps);
  uint64_t want = p.start_time.load();
  if (!alive || ps.state == 'Z' || ps.state == 'X' || (want != 0 && ps.start_time != want)) {
    reclaim(p, pid, alive ? ps.state : 0);
    return false;
  }
  return true;
}

void TreeMembers::reclaim_ended(const std::vector<pid_t>& ended) {
  for (uint32_t i = 0, n = process_limit(seg_); i < n; ++i) {
    auto& p = seg_.processes[i];
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive) continue;
    pid_t pid = p.pid.load();
    ProcessStatus ps;
    if (std::find(ended.begin(), ended.end(), pid) != ended.end()) still_live(p, pid, ps);
  }
}

std::vector<pid_t> TreeMembers::pids() {
  std::unordered_set<pid_t> roots = live_roots(nullptr, nullptr);
  std::vector<pid_t> all(roots.begin(), roots.end());
  for (pid_t d : proc_.descendants(roots)) all.push_back(d);
  std::sort(all.begin(), all.end());
  return all;
}

// The tracer's reaping of a traced root and the owner's wait can interleave so that /proc reads it
// untraced while the owner's wait does not see it yet (tracer.static_c once reported such a root
// as blocked forever). A leader that ended alone reads 'Z' while its other threads run: those
// count, not it.
bool TreeMembers::root_exiting() {
  if (proc_.thread_state(root_, root_) != 'Z') return false;
  char path[48];
  snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(root_));
  std::string status = ProcReader::read_small(path);
  const char* t = strstr(status.c_str(), "Threads:");
  return t && atoi(t + 8) <= 1;
}

// A traced process that exited is reported to the tracer before its parent: until the tracer has
// reaped it, its parent cannot, and the tree is not done with it.
bool TreeMembers::traced_zombie(pid_t tid) {
  if (seg_.header.traced.load(std::memory_order_acquire) == 0) return false;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
  std::string status = ProcReader::read_small(path);
  const char* t = strstr(status.c_str(), "TracerPid:");
  return t && atoi(t + 10) != 0;
}

}  // namespace vtime::detail
