// Views of the session tables for recorders (see vtime/observe.h).
#include <vtime/observe.h>

#include <vtime/abi.h>

#include "libc.h"
#include <vtime/internal/proc_reader.h>
#include <vtime/internal/slots.h>

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <cstdio>

namespace vtime {
namespace {

constexpr uint32_t kStatCounted = 2;  // ThreadStat::ignored once its name was checked: counted

std::string thread_name(pid_t pid, pid_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/comm", static_cast<int>(pid), static_cast<int>(tid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[64];
  ssize_t n = detail::libc().read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {};
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace

ProcessNames::ProcessNames() : reader_(std::make_unique<detail::ProcReader>()) {}
ProcessNames::~ProcessNames() = default;

std::string ProcessNames::get(pid_t pid) { return reader_->process_name(pid); }

void ProcessNames::keep_only(const std::vector<pid_t>& live) {
  reader_->prune({}, std::unordered_set<pid_t>(live.begin(), live.end()));
}

std::vector<PendingWait> pending_waits(Session& s) {
  abi::Segment& seg = s.segment();
  std::vector<PendingWait> out;
  for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
    auto& w = seg.waiters[i];
    if (w.state.load(std::memory_order_acquire) != abi::kWaiting) continue;
    int64_t d = w.deadline.load(std::memory_order_relaxed);
    if (d == abi::kNoDeadline) continue;
    // A language runtime's own waits (Go's sysmon) are not the program's timers, and whether they
    // exist at a given instant depends on how the runtime's threads raced (abi.h).
    if (w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer &&
        (w.tracer_flags.load(std::memory_order_relaxed) & abi::kTracerHousekeeping) != 0) {
      continue;
    }
    PendingWait p;
    p.pid = w.pid.load(std::memory_order_relaxed);
    bool any_thread = w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer &&
                      (w.tracer_flags.load(std::memory_order_relaxed) & abi::kTracerAnyThread) != 0;
    p.tid = w.is_timer.load(std::memory_order_relaxed) || any_thread ? 0 : w.tid.load(std::memory_order_relaxed);
    p.reason = w.reason.load(std::memory_order_relaxed);
    p.deadline = TimePoint::from_ns(d);
    p.seq = w.seq.load(std::memory_order_relaxed);
    if (p.pid > 0) out.push_back(p);
  }
  std::sort(out.begin(), out.end(), [](const PendingWait& a, const PendingWait& b) {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.seq < b.seq;
  });
  return out;
}

std::vector<RegisteredProcess> registered_processes(Session& s) {
  std::vector<RegisteredProcess> out;
  for (auto& p : s.segment().processes) {
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive) continue;
    out.push_back({p.pid.load(std::memory_order_relaxed), p.parent.load(std::memory_order_relaxed),
                   p.lineage.load(std::memory_order_relaxed)});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.pid < b.pid; });
  return out;
}

std::map<pid_t, ClockReads> clock_reads(Session& s, const std::vector<std::string>& ignored_thread_names,
                                        ProcessNames* names) {
  abi::Segment& seg = s.segment();
  std::map<pid_t, ClockReads> out;
  // "proc:PATTERN" leaves out every read of the processes whose name matches, including those of
  // their exited threads (folded into the process slot, where no thread name is left to match).
  std::vector<std::string> proc_patterns;
  for (auto& pat : ignored_thread_names) {
    if (pat.rfind("proc:", 0) == 0) proc_patterns.push_back(pat.substr(5));
  }
  auto process_ignored = [&](pid_t pid) {
    if (proc_patterns.empty()) return false;
    std::string name = names ? names->get(pid) : thread_name(pid, pid);
    for (auto& pat : proc_patterns) {
      if (fnmatch(pat.c_str(), name.c_str(), 0) == 0) return true;
    }
    return false;
  };
  std::set<pid_t> left_out;
  std::vector<pid_t> seen;
  for (uint32_t i = 0, n = detail::process_limit(seg); i < n; ++i) {
    auto& p = seg.processes[i];
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive) continue;
    seen.push_back(p.pid.load(std::memory_order_relaxed));
    if (process_ignored(p.pid.load(std::memory_order_relaxed))) {
      left_out.insert(p.pid.load(std::memory_order_relaxed));
      continue;
    }
    ClockReads& c = out[p.pid.load(std::memory_order_relaxed)];
    c.reads += p.clock_reads.load(std::memory_order_relaxed);
    c.digest += p.clock_digest.load(std::memory_order_relaxed);
  }
  if (names && !proc_patterns.empty()) names->keep_only(seen);
  for (auto& t : seg.thread_stats) {
    if (t.state.load(std::memory_order_acquire) != 1) continue;
    pid_t pid = t.pid.load(std::memory_order_relaxed);
    auto& proc = seg.processes[t.process.load(std::memory_order_relaxed) % abi::kProcessSlots];
    if (proc.state.load(std::memory_order_acquire) != abi::kProcessLive || proc.pid.load(std::memory_order_relaxed) != pid) {
      // Its process is gone (and was reclaimed): nobody will free this entry but us.
      t.state.store(0, std::memory_order_release);
      continue;
    }
    uint32_t ignored = t.ignored.load(std::memory_order_relaxed);
    if (ignored == 0) {
      // First sight: decide once by the thread's name (runtimes name their threads as they
      // start, before their first clock read claims this entry).
      std::string name = thread_name(pid, t.tid.load(std::memory_order_relaxed));
      ignored = kStatCounted;
      for (auto& pat : ignored_thread_names) {
        if (fnmatch(pat.c_str(), name.c_str(), 0) == 0) ignored = 1;
      }
      t.ignored.store(ignored, std::memory_order_relaxed);
    }
    if (ignored == 1 || left_out.count(pid)) continue;
    ClockReads& c = out[pid];
    c.reads += t.reads.load(std::memory_order_relaxed);
    c.digest += t.digest.load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace vtime
