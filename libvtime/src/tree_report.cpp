// The tree report's reading of blocked threads (see tree_report.h).
#include "tree_report.h"

#include <vtime/internal/slots.h>

#include "waiter_kinds.h"

#include <sys/syscall.h>
#include <sys/uio.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

namespace vtime {

std::string to_string(const ThreadReport& t) {
  return "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " (" + t.comm + ") [" +
         std::string(1, t.state) + "]: " + t.waits_on;
}

const char* reason_name(uint32_t reason) {
  static const char* names[] = {"wait", "sleep", "poll", "select", "epoll_wait", "condition variable",
                                "semaphore", "mutex", "rwlock", "futex", "join", "sigtimedwait",
                                "POSIX timer", "timerfd", "alarm/itimer", "CPU time (--cpu-model calls)"};
  static_assert(sizeof names / sizeof names[0] == abi::kReasonCount);
  return reason < abi::kReasonCount ? names[reason] : "wait";
}

namespace detail {

const char* syscall_name(long nr) {
  switch (nr) {
    case 0: return "read";
    case 1: return "write";
    case 7: return "poll";
    case 23: return "select";
    case 34: return "pause";
    case 35: return "nanosleep";
    case 43: return "accept";
    case 45: return "recvfrom";
    case 47: return "recvmsg";
    case 61: return "wait4";
    case 130: return "rt_sigsuspend";
    case 128: return "rt_sigtimedwait";
    case 202: return "futex";
    case 220: return "semtimedop";
    case 242: return "mq_timedsend";
    case 243: return "mq_timedreceive";
    case 299: return "recvmmsg";
    case 230: return "clock_nanosleep";
    case 232: return "epoll_wait";
    case 247: return "waitid";
    case 270: return "pselect6";
    case 271: return "ppoll";
    case 281: return "epoll_pwait";
    case 288: return "accept4";
    case 441: return "epoll_pwait2";
    default: return nullptr;
  }
}

using detail::parse_syscall_line;
using detail::SyscallLine;

std::string real_timeout_of(pid_t pid, const char* line) {
  SyscallLine call;
  if (!parse_syscall_line(line, call)) return {};
  const long nr = call.nr;
  const uint64_t* a = call.a;
  auto ms = [](uint64_t v) -> int64_t {
    int t = static_cast<int>(v);
    return t > 0 ? static_cast<int64_t>(t) * 1000000 : -1;
  };
  auto at = [&](uint64_t addr, bool timeval) -> int64_t {
    if (addr == 0) return -1;
    int64_t sec = 0, frac = 0;
    int64_t buf[2];
    iovec local{buf, sizeof buf}, remote{reinterpret_cast<void*>(addr), sizeof buf};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof buf)) return -2;
    sec = buf[0];
    frac = buf[1];
    int64_t ns = sec * 1000000000 + (timeval ? frac * 1000 : frac);
    return ns > 0 ? ns : -1;  // zero: returns at once
  };
  const char* name = syscall_name(nr);
  int64_t ns = -1;
  switch (nr) {
    case SYS_nanosleep: ns = at(a[0], false); break;
    case SYS_clock_nanosleep: ns = at(a[2], false); break;
    case SYS_futex: {
      long cmd = static_cast<long>(a[1]) & 0x7f;
      if (cmd != 0 && cmd != 9) break;  // FUTEX_WAIT, FUTEX_WAIT_BITSET
      // The shim's own waits (an agent's or a sleeper's 1 s heartbeat) are on words of the
      // session segment, which the process maps from /dev/shm/vtime.*: not the program's.
      std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
      std::string m;
      while (std::getline(maps, m)) {
        if (m.find("/vtime.") == std::string::npos) continue;
        uint64_t lo = strtoull(m.c_str(), nullptr, 16), hi = strtoull(m.c_str() + m.find('-') + 1, nullptr, 16);
        if (a[0] >= lo && a[0] < hi) return {};
      }
      ns = at(a[3], false);
      break;
    }
    case SYS_epoll_wait: ns = ms(a[3]); break;
    case SYS_epoll_pwait: ns = ms(a[3]); break;
    case SYS_epoll_pwait2: ns = at(a[3], false); break;
    case SYS_poll: ns = ms(a[2]); break;
    case SYS_ppoll: ns = at(a[2], false); break;
    case SYS_select: ns = at(a[4], true); break;
    case SYS_pselect6: ns = at(a[4], false); break;
    case SYS_semtimedop: ns = at(a[3], false); break;
    case SYS_rt_sigtimedwait: ns = at(a[2], false); break;
    case SYS_mq_timedreceive: case SYS_mq_timedsend: ns = at(a[4], false); break;
    case SYS_recvmmsg: ns = at(a[4], false); break;
    default: return {};
  }
  if (ns == -1 || ns == 0) return {};
  char buf[160];
  if (ns == -2) {  // unreadable: still a timeout, of unknown length
    snprintf(buf, sizeof buf, "%s with a real timeout", name ? name : "system call");
    return buf;
  }
  snprintf(buf, sizeof buf, "%s with a real timeout of %" PRId64 ".%09" PRId64 " s", name ? name : "system call",
           ns / 1000000000, ns % 1000000000);
  return buf;
}

std::vector<ThreadReport> describe_tree(abi::Segment& seg, ProcReader& proc, const std::vector<pid_t>& pids) {
  std::vector<ThreadReport> out;
  for (pid_t pid : pids) {
    std::vector<ThreadSample> threads;
    proc.sample_threads(pid, threads);
    for (auto& t : threads) {
      ThreadReport r;
      r.pid = pid;
      r.tid = t.tid;
      r.state = t.state;
      char path[96];
      snprintf(path, sizeof path, "/proc/%d/task/%d/comm", static_cast<int>(pid), static_cast<int>(t.tid));
      r.comm = ProcReader::read_small(path);
      if (!r.comm.empty() && r.comm.back() == '\n') r.comm.pop_back();
      for (uint32_t i = 0, n = waiter_limit(seg); i < n; ++i) {
        auto& w = seg.waiters[i];
        uint32_t st = w.state.load();
        if ((st != abi::kWaiting && st != abi::kWoken) || w.is_timer.load() || w.tid.load() != t.tid) continue;
        int64_t d = w.deadline.load();
        char buf[160];
        if (d == abi::kNoDeadline) {
          snprintf(buf, sizeof buf, "%s with no timeout", reason_name(w.reason.load()));
        } else {
          snprintf(buf, sizeof buf, "%s until virtual %" PRId64 ".%09" PRId64 " s", reason_name(w.reason.load()),
                   d / 1000000000, d % 1000000000);
        }
        r.waits_on = buf;
      }
      if (r.waits_on.empty() && t.state != 'Z' && !t.running && t.syscall_nr >= 0) {
        char line[256];
        int n = proc.syscall_line(pid, t.tid, line, sizeof line - 1);
        if (n > 0) {
          line[n] = 0;
          r.real_timeout = real_timeout_of(pid, line);
          if (!r.real_timeout.empty()) r.waits_on = r.real_timeout + ", which vtime does not control";
        }
      }
      if (r.waits_on.empty()) {
        // The sample already read /proc/.../syscall.
        long nr = t.syscall_nr;
        const char* name = syscall_name(nr);
        if (t.state == 'Z') r.waits_on = "exited (zombie)";
        else if (t.running) r.waits_on = "running";
        else if (name) r.waits_on = std::string(name) + " (blocking call, no virtual timeout)";
        else if (nr >= 0) r.waits_on = "system call " + std::to_string(nr) + " (no virtual timeout)";
        else r.waits_on = "unknown";
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace detail
}  // namespace vtime
