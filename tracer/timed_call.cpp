// Decoding and rewriting timed waits of traced threads (see timed_call.h).
#include "timed_call.h"

#include "inferior.h"

#include <vtime/internal/context.h>
#include <vtime/internal/timer_slack.h>

#include <vtime/session.h>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include <cerrno>
#include <vector>

namespace vtime::tracer {
namespace {

constexpr long kErestartsys = 512, kErestartnointr = 513, kErestartnohand = 514, kErestartRestartblock = 516;

// A timespec in the thread's memory, in ns; nullopt if unreadable or invalid (the kernel
// answers EINVAL or EFAULT itself).
std::optional<int64_t> read_timespec(pid_t pid, uint64_t addr) {
  timespec ts{};
  if (!read_mem(pid, addr, &ts, sizeof ts)) return std::nullopt;
  if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return std::nullopt;
  if (ts.tv_sec > 9000000000LL) return INT64_MAX / 2;  // centuries: as good as forever
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The timeout of an fd wait, in ns: an int of milliseconds (epoll_wait, poll; negative: none) or
// a timespec pointer (epoll_pwait2, ppoll; NULL: none); nullopt for none, zero or unreadable.
std::optional<int64_t> fd_wait_timeout(pid_t pid, bool pointer, uint64_t arg) {
  if (pointer) {
    if (arg == 0) return std::nullopt;
    auto d = read_timespec(pid, arg);
    if (!d || *d == 0) return std::nullopt;
    return d;
  }
  int ms = static_cast<int>(arg);
  if (ms <= 0) return std::nullopt;
  return static_cast<int64_t>(ms) * 1000000;
}

}  // namespace

std::optional<TimedCall> decode(pid_t pid, const user_regs_struct& r, const abi::Segment& seg, bool* uncontrolled) {
  *uncontrolled = false;
  const auto& clk = seg.header.clock;
  int64_t now = Session::read_clock(clk).ns();
  int64_t shift = clk.realtime_shift_ns.load(std::memory_order_acquire);
  int64_t realtime_base = clk.epoch_ns + shift;
  TimedCall c;
  c.realtime_shift = shift;
  long nr = static_cast<long>(r.orig_rax);
  auto relative = [&](int64_t d) { return d >= INT64_MAX / 2 - now ? INT64_MAX / 2 : now + d; };
  switch (nr) {
    case SYS_nanosleep: {
      auto d = read_timespec(pid, r.rdi);
      if (!d || *d == 0) return std::nullopt;
      c.deadline_ns = relative(*d);
      c.rem_addr = r.rsi;
      c.reason = abi::kReasonSleep;
      c.nr = SYS_ppoll;
      c.tag_arg = 4;
      break;
    }
    case SYS_clock_nanosleep: {
      long id = static_cast<long>(r.rdi);
      if (!detail::is_virtual_clock(static_cast<clockid_t>(id))) return std::nullopt;
      auto d = read_timespec(pid, r.rdx);
      if (!d) return std::nullopt;
      if (r.rsi & TIMER_ABSTIME) {
        c.realtime_abs = detail::is_realtime_clock(static_cast<clockid_t>(id));
        c.deadline_ns = *d - (c.realtime_abs ? realtime_base : clk.mono_origin_ns);
      } else {
        c.deadline_ns = relative(*d);
        c.rem_addr = r.r10;
      }
      c.reason = abi::kReasonSleep;
      c.nr = SYS_ppoll;
      c.tag_arg = 4;
      break;
    }
    case SYS_futex: {
      long op = static_cast<long>(r.rsi);
      long cmd = op & FUTEX_CMD_MASK;
      if ((cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET) || r.r10 == 0) return std::nullopt;
      auto d = read_timespec(pid, r.r10);
      if (!d) return std::nullopt;
      if (cmd == FUTEX_WAIT) {
        c.deadline_ns = relative(*d);
      } else {
        c.realtime_abs = (op & FUTEX_CLOCK_REALTIME) != 0;
        c.deadline_ns = *d - (c.realtime_abs ? realtime_base : clk.mono_origin_ns);
      }
      c.reason = abi::kReasonFutex;
      c.nr = SYS_futex;
      c.tag_arg = 4;
      c.timeout_result = -ETIMEDOUT;
      break;
    }
    case SYS_epoll_wait:
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2: {
      // A signal mask (r8) leaves no argument for the tag (r9 is its size).
      c.exit_tracked = nr != SYS_epoll_wait && r.r8 != 0;
      auto d = fd_wait_timeout(pid, nr == SYS_epoll_pwait2, r.r10);
      if (!d) return std::nullopt;
      c.deadline_ns = relative(*d);
      c.reason = abi::kReasonEpoll;
      c.nr = SYS_epoll_pwait;
      c.tag_arg = 5;
      break;
    }
    case SYS_poll:
    case SYS_ppoll: {
      // ppoll with a signal mask: r8 is its size, no room for the tag.
      c.exit_tracked = nr == SYS_ppoll && r.r10 != 0;
      auto d = fd_wait_timeout(pid, nr == SYS_ppoll, r.rdx);
      if (!d) return std::nullopt;
      c.deadline_ns = relative(*d);
      c.reason = abi::kReasonPoll;
      c.nr = SYS_ppoll;
      c.tag_arg = 4;
      break;
    }
    case SYS_select:
    case SYS_pselect6: {
      if (r.r8 == 0) return std::nullopt;
      std::optional<int64_t> d;
      if (nr == SYS_select) {
        timeval tv{};
        if (!read_mem(pid, r.r8, &tv, sizeof tv) || tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000) {
          return std::nullopt;
        }
        d = static_cast<int64_t>(tv.tv_sec) * 1000000000 + static_cast<int64_t>(tv.tv_usec) * 1000;
      } else {
        d = read_timespec(pid, r.r8);
      }
      if (!d || *d == 0) return std::nullopt;
      int n = static_cast<int>(r.rdi);
      if (n < 0 || n > 1 << 20) return std::nullopt;
      c.deadline_ns = relative(*d);
      c.reason = abi::kReasonSelect;
      c.nr = nr;
      c.exit_tracked = true;
      c.sets[0] = r.rsi;
      c.sets[1] = r.rdx;
      c.sets[2] = r.r10;
      c.set_bytes = static_cast<size_t>((n + 63) / 64) * 8;
      c.timeout_addr = r.r8;
      break;
    }
    default:
      return std::nullopt;
  }
  if (c.deadline_ns <= now) return std::nullopt;  // already due: the real call returns at once
  // A real kernel ends it later by the timer slack, as the shim's waits (timer_slack.h).
  if (c.deadline_ns < INT64_MAX / 4) {
    const detail::WaitSlack slack = detail::wait_slack(seg.header, c.reason, c.deadline_ns - now);
    c.deadline_ns += slack.late_ns;
    c.early_ns = slack.range_ns;
  }
  return c;
}

namespace {
unsigned long long& arg(user_regs_struct& r, int i) {
  switch (i) {
    case 0: return r.rdi;
    case 1: return r.rsi;
    case 2: return r.rdx;
    case 3: return r.r10;
    case 4: return r.r8;
    default: return r.r9;
  }
}
}  // namespace

bool make_direct(TimedCall& c, uint64_t word_addr, uint32_t word_value, uint32_t word_bit, uint64_t forever_addr) {
  if (c.reason != abi::kReasonSleep || c.exit_tracked || c.nr != SYS_ppoll || word_addr == 0 || forever_addr == 0) return false;
  c.direct = true;
  c.word_addr = word_addr;
  c.word_value = word_value;
  c.word_bit = word_bit;
  c.forever_addr = forever_addr;
  c.nr = SYS_futex;
  c.tag_arg = 4;  // uaddr2, which FUTEX_WAIT_BITSET ignores
  c.timeout_result = 0;
  return true;
}

TimedCall charge(const abi::Segment& seg, int64_t cost_ns, uint32_t reason) {
  TimedCall c;
  c.deadline_ns = Session::read_clock(seg.header.clock).ns() + cost_ns;
  c.reason = reason;
  c.nr = SYS_ppoll;
  c.tag_arg = 4;
  c.charged = true;
  return c;
}

void rewrite(user_regs_struct& r, const TimedCall& c, uint64_t tag) {
  if (c.direct) {
    r.orig_rax = SYS_futex;
    r.rdi = c.word_addr;
    r.rsi = FUTEX_WAIT_BITSET;  // shared: the controller wakes it through its own mapping of the segment
    r.rdx = c.word_value;
    r.r10 = c.forever_addr;
    r.r8 = tag;
    r.r9 = c.word_bit;
    return;
  }
  long nr = static_cast<long>(r.orig_rax);
  if (c.exit_tracked) {
    // Only the timeout goes; everything else stays as the program passed it.
    if (nr == SYS_select || nr == SYS_pselect6) {
      r.r8 = 0;
    } else if (nr == SYS_ppoll) {
      r.rdx = 0;
    } else {  // epoll_pwait, epoll_pwait2 -> epoll_pwait with the same mask and size
      r.r10 = 0xffffffffull;
      r.orig_rax = SYS_epoll_pwait;
    }
    return;
  }
  if (c.nr == SYS_ppoll && (c.charged || nr == SYS_nanosleep || nr == SYS_clock_nanosleep)) {
    r.rdi = 0;  // no descriptors: only a signal ends it before the deadline
    r.rsi = 0;
  }
  if (c.nr == SYS_ppoll) {
    r.rdx = 0;  // no timeout
    r.r10 = 0;  // no signal mask
  } else if (c.nr == SYS_futex) {
    r.r10 = 0;
  } else if (c.nr == SYS_epoll_pwait) {
    r.r10 = 0xffffffffull;  // -1: no timeout
    r.r8 = 0;
  }
  r.orig_rax = static_cast<unsigned long long>(c.nr);
  arg(r, c.tag_arg) = tag;
}

bool in_call(const user_regs_struct& r, const TimedCall& c, uint64_t tag) {
  if (c.direct && static_cast<long>(r.orig_rax) == SYS_restart_syscall) return true;
  user_regs_struct copy = r;
  return static_cast<long>(r.orig_rax) == c.nr && arg(copy, c.tag_arg) == tag;
}

bool write_timeout_effects(pid_t pid, const TimedCall& c) {
  bool ok = true;
  if (c.set_bytes > 0) {
    std::vector<unsigned char> zeros(c.set_bytes, 0);
    for (uint64_t set : c.sets) {
      if (set != 0) ok = write_mem(pid, set, zeros.data(), zeros.size()) && ok;
    }
  }
  if (c.timeout_addr != 0) {
    // What is left of the timeout: nothing (a timeval and a timespec are both two zero words).
    int64_t zero[2] = {0, 0};
    ok = write_mem(pid, c.timeout_addr, zero, sizeof zero) && ok;
  }
  return ok;
}

bool interrupted_result(long rax) {
  return rax == -EINTR || rax == -kErestartsys || rax == -kErestartnointr || rax == -kErestartnohand ||
         rax == -kErestartRestartblock;
}

}  // namespace vtime::tracer
