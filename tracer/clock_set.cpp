// Emulation of raw clock-setting calls (see clock_set.h).
#include "clock_set.h"

#include "inferior.h"

#include <vtime/internal/context.h>
#include <vtime/internal/settime.h>

#include <sys/syscall.h>
#include <sys/timex.h>

#include <cerrno>
#include <optional>

namespace vtime::tracer {

namespace {

// The call's result, or nullopt for a clock the kernel keeps.
std::optional<long> emulate(pid_t tid, pid_t pid, const user_regs_struct& r, abi::Segment& seg) {
  auto nr = static_cast<long>(r.orig_rax);
  // Asked only for these calls: every timed wait of a traced thread stops here first.
  auto may = [tid] { return detail::may_set_time(tid); };
  switch (nr) {
    case SYS_clock_settime: {
      auto clk = static_cast<clockid_t>(r.rdi);
      if (!detail::is_virtual_clock(clk)) return std::nullopt;
      timespec ts{};
      if (!read_mem(pid, r.rsi, &ts, sizeof ts)) return -EFAULT;
      return detail::settime_clock(seg, may(), clk, ts);
    }
    case SYS_settimeofday: {
      // The kernel takes a time and a timezone in one call (glibc refuses both): the time is set,
      // the timezone, the host's, accepted and not applied.
      timeval tv{};
      bool has_tv = r.rdi != 0;
      if (has_tv && !read_mem(pid, r.rdi, &tv, sizeof tv)) return -EFAULT;
      return detail::settime_timeofday(seg, may(), has_tv ? &tv : nullptr, !has_tv && r.rsi != 0);
    }
    case SYS_adjtimex:
    case SYS_clock_adjtime: {
      uint64_t addr = nr == SYS_adjtimex ? r.rdi : r.rsi;
      if (nr == SYS_clock_adjtime) {
        auto clk = static_cast<clockid_t>(r.rdi);
        if (!detail::is_virtual_clock(clk)) return std::nullopt;
        if (clk != CLOCK_REALTIME) return -EOPNOTSUPP;  // as Linux: only realtime adjusts
      }
      struct timex tx {};
      if (!read_mem(pid, addr, &tx, sizeof tx)) return -EFAULT;
      long res = detail::settime_adjust(seg, may(), tx);
      if (res >= 0 && !write_mem(pid, addr, &tx, sizeof tx)) return -EFAULT;
      return res;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

bool emulate_clock_set(pid_t tid, pid_t pid, user_regs_struct& r, abi::Segment& seg) {
  std::optional<long> res = emulate(tid, pid, r, seg);
  if (!res) return false;
  r.orig_rax = static_cast<unsigned long long>(-1);  // the kernel skips the call ...
  r.rax = static_cast<unsigned long long>(*res);      // ... which returns this
  set_regs(tid, r);
  return true;
}

}  // namespace vtime::tracer
