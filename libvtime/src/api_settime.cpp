// C API: setting the clock (clock_settime, settimeofday, stime, adjtimex, ntp_adjtime,
// clock_adjtime, adjtime). Inside a session these act on the tree's virtual clock only: a set of
// CLOCK_REALTIME moves the realtime clock every process of the tree sees, never the host's. The
// errors stay those of Linux: EINVAL for a clock that cannot be set or a bad value (checked
// first, as the kernel does), EPERM without CAP_SYS_TIME.
#include <vtime/vtime.h>

#include "futex.h"
#include "context.h"
#include "libc.h"
#include "slots.h"
#include "waits.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

using namespace vtime;
using namespace vtime::detail;

namespace {

constexpr int64_t kNsPerSec = 1000000000;

// CAP_SYS_TIME in the calling thread's effective set (what the kernel checks).
bool may_set_time() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &hdr, data) != 0) return false;
  return (data[CAP_SYS_TIME / 32].effective & (1u << (CAP_SYS_TIME % 32))) != 0;
}

int fail(int e) {
  errno = e;
  return -1;
}

int64_t realtime_now_ns(ProcessContext& c) { return now(c).ns() + realtime_base(c); }

// Moves the tree's CLOCK_REALTIME by delta: every later read of a realtime clock, in any process
// of the tree, sees it; absolute realtime waits and timers move with it on the virtual time line
// (those already past fire at the controller's next decision); monotonic clocks do not move.
void shift_realtime(ProcessContext& c, int64_t delta) {
  auto& clk = c.seg->header.clock;
  int64_t shift = clk.realtime_shift_ns.fetch_add(delta, std::memory_order_acq_rel) + delta;
  clk.realtime_sets.fetch_add(1, std::memory_order_acq_rel);
  for (uint32_t i = 0, n = waiter_limit(*c.seg); i < n; ++i) {
    auto& s = c.seg->waiters[i];
    if (s.realtime_abs.load(std::memory_order_acquire) == 0) continue;
    uint32_t st = s.state.load(std::memory_order_acquire);
    if (st == abi::kWaiting || st == abi::kWoken) move_realtime_deadline(s, shift);
  }
  // Timerfds armed with TFD_TIMER_CANCEL_ON_SET live in their own processes: their agents look.
  for (uint32_t p = 0; p < abi::kProcessSlots; ++p) {
    auto& ps = c.seg->processes[p];
    if (ps.state.load(std::memory_order_acquire) == 1 && ps.agent_tid.load(std::memory_order_acquire) != 0) {
      wake_agent(*c.seg, p);
    }
  }
  notify_activity(*c.seg);
}

bool valid_timespec(const timespec& ts) { return ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < kNsPerSec; }

int set_realtime(ProcessContext& c, const timespec& ts) {
  if (!valid_timespec(ts)) return fail(EINVAL);
  if (!may_set_time()) return fail(EPERM);
  shift_realtime(c, ts.tv_sec * kNsPerSec + ts.tv_nsec - realtime_now_ns(c));
  return 0;
}

// What a read-only adjtimex reports: a clock that is exact and synchronised. Synthesised rather
// than read from the host, whose NTP state is neither virtual nor reproducible.
void fill_timex(ProcessContext& c, struct timex* tx, bool nano) {
  int64_t rt = realtime_now_ns(c);
  int modes = tx->modes;
  memset(static_cast<void*>(tx), 0, sizeof *tx);
  tx->modes = modes;
  tx->status = nano ? STA_NANO : 0;
  tx->constant = 2;
  tx->precision = 1;
  tx->tolerance = 32768000;  // 500 ppm, Linux's MAXFREQ_SCALED
  tx->tick = static_cast<long>(1000000 / sysconf(_SC_CLK_TCK));
  tx->time.tv_sec = rt / kNsPerSec;
  tx->time.tv_usec = nano ? rt % kNsPerSec : (rt % kNsPerSec) / 1000;
}

int adjust_realtime(ProcessContext& c, struct timex* tx) {
  if (!tx) return fail(EFAULT);
  unsigned modes = tx->modes;
  bool read_only = modes == 0 || modes == ADJ_OFFSET_SS_READ;
  if (!read_only) {
    if (modes & ADJ_SETOFFSET) {
      long limit = (modes & ADJ_NANO) ? kNsPerSec : 1000000;
      if (tx->time.tv_usec < 0 || tx->time.tv_usec >= limit) return fail(EINVAL);
    }
    if (!may_set_time()) return fail(EPERM);
    if (modes & ADJ_SETOFFSET) {
      int64_t sub = (modes & ADJ_NANO) ? tx->time.tv_usec : tx->time.tv_usec * 1000;
      shift_realtime(c, tx->time.tv_sec * kNsPerSec + sub);
    } else if ((modes & ADJ_OFFSET_SINGLESHOT) == ADJ_OFFSET_SINGLESHOT) {
      // adjtime(3): the kernel slews at 0.5 ms/s; the virtual clock takes the whole step at once.
      shift_realtime(c, static_cast<int64_t>(tx->offset) * 1000);
    }
    // Frequency, PLL offset, status, tick...: the virtual clock runs exactly; accepted, no effect.
  }
  bool nano = (modes & ADJ_NANO) != 0;
  fill_timex(c, tx, nano);
  return TIME_OK;
}

}  // namespace

extern "C" {

int vtime_clock_settime(clockid_t clk, const struct timespec* ts) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_settime(clk, ts);
  if (!ts) return fail(EFAULT);
  if (clk != CLOCK_REALTIME) return fail(EINVAL);  // Linux sets CLOCK_REALTIME only
  return set_realtime(*c, *ts);
}

int vtime_settimeofday(const struct timeval* tv, const void* tz) {
  ProcessContext* c = context();
  if (!c) return libc().settimeofday(tv, static_cast<const struct timezone*>(tz));
  if (tv && tz) return fail(EINVAL);  // glibc refuses both at once
  if (tz) {
    // The kernel's timezone is the host's: with the right, accepted and not applied.
    return may_set_time() ? 0 : fail(EPERM);
  }
  if (!tv) return 0;
  if (tv->tv_usec < 0 || tv->tv_usec >= 1000000) return fail(EINVAL);
  return set_realtime(*c, timespec{tv->tv_sec, tv->tv_usec * 1000});
}

int vtime_stime(const time_t* t) {
  ProcessContext* c = context();
  if (!t) return fail(EFAULT);
  if (!c) {
    timespec ts{*t, 0};
    return libc().clock_settime(CLOCK_REALTIME, &ts);
  }
  return set_realtime(*c, timespec{*t, 0});
}

int vtime_adjtimex(struct timex* tx) {
  ProcessContext* c = context();
  if (!c) return libc().adjtimex(tx);
  return adjust_realtime(*c, tx);
}

int vtime_clock_adjtime(clockid_t clk, struct timex* tx) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_adjtime(clk, tx);
  if (clk != CLOCK_REALTIME) return fail(EOPNOTSUPP);  // as Linux: only realtime adjusts
  return adjust_realtime(*c, tx);
}

int vtime_adjtime(const struct timeval* delta, struct timeval* olddelta) {
  ProcessContext* c = context();
  if (!c) return libc().adjtime(delta, olddelta);
  if (delta) {
    if (!may_set_time()) return fail(EPERM);
    shift_realtime(*c, static_cast<int64_t>(delta->tv_sec) * kNsPerSec + static_cast<int64_t>(delta->tv_usec) * 1000);
  }
  if (olddelta) *olddelta = timeval{0, 0};  // nothing is ever left to slew
  return 0;
}

}  // extern "C"
