// C API: setting the clock (clock_settime, settimeofday, stime, adjtimex, ntp_adjtime,
// clock_adjtime, adjtime). Inside a session these act on the tree's virtual clock only: a set of
// CLOCK_REALTIME moves the realtime clock every process of the tree sees, never the host's. The
// errors stay those of Linux: EINVAL for a clock that cannot be set or a bad value (checked
// first, as the kernel does), EPERM without CAP_SYS_TIME.
#include <vtime/vtime.h>

#include "caps.h"
#include <vtime/internal/futex.h>
#include <vtime/internal/context.h>
#include <vtime/internal/settime.h>
#include "libc.h"
#include <vtime/internal/slots.h>
#include <vtime/internal/waits.h>

#include <sys/timex.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

using namespace vtime;
using namespace vtime::detail;

namespace vtime::detail {

namespace {

constexpr int64_t kNsPerSec = 1000000000;

int64_t realtime_now_ns(abi::Segment& seg) {
  auto& clk = seg.header.clock;
  return Session::read_clock(clk).ns() + clk.epoch_ns + clk.realtime_shift_ns.load(std::memory_order_relaxed);
}

// Moves the tree's CLOCK_REALTIME by delta: every later read of a realtime clock, in any process
// of the tree, sees it; absolute realtime waits and timers move with it on the virtual time line
// (those already past fire at the controller's next decision); monotonic clocks do not move.
void shift_realtime(abi::Segment& seg, int64_t delta) {
  auto& clk = seg.header.clock;
  int64_t shift = clk.realtime_shift_ns.fetch_add(delta, std::memory_order_acq_rel) + delta;
  clk.realtime_sets.fetch_add(1, std::memory_order_acq_rel);
  for (uint32_t i = 0, n = waiter_limit(seg); i < n; ++i) {
    auto& s = seg.waiters[i];
    if (s.realtime_abs.load(std::memory_order_acquire) == 0) continue;
    uint32_t st = s.state.load(std::memory_order_acquire);
    if (st == abi::kWaiting || st == abi::kWoken || st == abi::kWaking) move_realtime_deadline(s, shift);
  }
  // Timerfds armed with TFD_TIMER_CANCEL_ON_SET live in their own processes: their agents look.
  for (uint32_t p = 0, n = detail::process_limit(seg); p < n; ++p) {
    auto& ps = seg.processes[p];
    if (ps.state.load(std::memory_order_acquire) == abi::kProcessLive && ps.agent_tid.load(std::memory_order_acquire) != 0) {
      wake_agent(seg, p);
    }
  }
  notify_activity(seg);
}

bool valid_timespec(const timespec& ts) { return ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < kNsPerSec; }

int set_realtime(abi::Segment& seg, bool may_set, const timespec& ts) {
  if (!valid_timespec(ts)) return -EINVAL;
  if (!may_set) return -EPERM;
  shift_realtime(seg, ts.tv_sec * kNsPerSec + ts.tv_nsec - realtime_now_ns(seg));
  return 0;
}

// What a read-only adjtimex reports: a clock that is exact and synchronised. Synthesised rather
// than read from the host, whose NTP state is neither virtual nor reproducible.
void fill_timex(abi::Segment& seg, struct timex& tx, bool nano) {
  int64_t rt = realtime_now_ns(seg);
  unsigned modes = tx.modes;
  memset(static_cast<void*>(&tx), 0, sizeof tx);
  tx.modes = modes;
  tx.status = nano ? STA_NANO : 0;
  tx.constant = 2;
  tx.precision = 1;
  tx.tolerance = 32768000;  // 500 ppm, Linux's MAXFREQ_SCALED
  tx.tick = static_cast<long>(1000000 / sysconf(_SC_CLK_TCK));
  tx.time.tv_sec = rt / kNsPerSec;
  tx.time.tv_usec = nano ? rt % kNsPerSec : (rt % kNsPerSec) / 1000;
}

}  // namespace

bool may_set_time(pid_t tid) { return has_capability(tid, CAP_SYS_TIME); }

int settime_clock(abi::Segment& seg, bool may_set, clockid_t clk, const timespec& ts) {
  if (clk != CLOCK_REALTIME) return -EINVAL;  // Linux sets CLOCK_REALTIME only
  return set_realtime(seg, may_set, ts);
}

int settime_timeofday(abi::Segment& seg, bool may_set, const timeval* tv, bool has_tz) {
  if (tv && has_tz) return -EINVAL;  // glibc refuses both at once
  if (has_tz) {
    // The kernel's timezone is the host's: with the right, accepted and not applied.
    return may_set ? 0 : -EPERM;
  }
  if (!tv) return 0;
  if (tv->tv_usec < 0 || tv->tv_usec >= 1000000) return -EINVAL;
  return set_realtime(seg, may_set, timespec{tv->tv_sec, tv->tv_usec * 1000});
}

int settime_adjust(abi::Segment& seg, bool may_set, struct timex& tx) {
  unsigned modes = tx.modes;
  bool read_only = modes == 0 || modes == ADJ_OFFSET_SS_READ;
  if (!read_only) {
    if (modes & ADJ_SETOFFSET) {
      long limit = (modes & ADJ_NANO) ? kNsPerSec : 1000000;
      if (tx.time.tv_usec < 0 || tx.time.tv_usec >= limit) return -EINVAL;
    }
    if (!may_set) return -EPERM;
    if (modes & ADJ_SETOFFSET) {
      int64_t sub = (modes & ADJ_NANO) ? tx.time.tv_usec : tx.time.tv_usec * 1000;
      shift_realtime(seg, tx.time.tv_sec * kNsPerSec + sub);
    } else if ((modes & ADJ_OFFSET_SINGLESHOT) == ADJ_OFFSET_SINGLESHOT) {
      // adjtime(3): the kernel slews at 0.5 ms/s; the virtual clock takes the whole step at once.
      shift_realtime(seg, static_cast<int64_t>(tx.offset) * 1000);
    }
    // Frequency, PLL offset, status, tick...: the virtual clock runs exactly; accepted, no effect.
  }
  fill_timex(seg, tx, (modes & ADJ_NANO) != 0);
  return TIME_OK;
}

}  // namespace vtime::detail

namespace {

// A settime_* result as the C API returns it: -1 and errno on failure.
int c_result(int r) {
  if (r >= 0) return r;
  errno = -r;
  return -1;
}

int fail(int e) {
  errno = e;
  return -1;
}

}  // namespace

extern "C" {

int vtime_clock_settime(clockid_t clk, const struct timespec* ts) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_settime(clk, ts);
  if (!ts) return fail(EFAULT);
  return c_result(settime_clock(*c->seg, may_set_time(), clk, *ts));
}

int vtime_settimeofday(const struct timeval* tv, const void* tz) {
  ProcessContext* c = context();
  if (!c) return libc().settimeofday(tv, static_cast<const struct timezone*>(tz));
  return c_result(settime_timeofday(*c->seg, may_set_time(), tv, tz != nullptr));
}

int vtime_stime(const time_t* t) {
  ProcessContext* c = context();
  if (!t) return fail(EFAULT);
  timespec ts{*t, 0};
  if (!c) return libc().clock_settime(CLOCK_REALTIME, &ts);
  return c_result(settime_clock(*c->seg, may_set_time(), CLOCK_REALTIME, ts));
}

int vtime_adjtimex(struct timex* tx) {
  ProcessContext* c = context();
  if (!c) return libc().adjtimex(tx);
  if (!tx) return fail(EFAULT);
  return c_result(settime_adjust(*c->seg, may_set_time(), *tx));
}

int vtime_clock_adjtime(clockid_t clk, struct timex* tx) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_adjtime(clk, tx);
  if (clk != CLOCK_REALTIME) return fail(EOPNOTSUPP);  // as Linux: only realtime adjusts
  if (!tx) return fail(EFAULT);
  return c_result(settime_adjust(*c->seg, may_set_time(), *tx));
}

int vtime_adjtime(const struct timeval* delta, struct timeval* olddelta) {
  ProcessContext* c = context();
  if (!c) return libc().adjtime(delta, olddelta);
  if (delta) {
    // adjtimex's single-shot offset, in microseconds (what glibc's adjtime does).
    struct timex tx {};
    tx.modes = ADJ_OFFSET_SINGLESHOT;
    tx.offset = static_cast<long>(delta->tv_sec * 1000000 + delta->tv_usec);
    if (int r = settime_adjust(*c->seg, may_set_time(), tx); r < 0) return c_result(r);
  }
  if (olddelta) *olddelta = timeval{0, 0};  // nothing is ever left to slew
  return 0;
}

int vtime_ntp_gettime(struct ntptimeval* ntv) {
  ProcessContext* c = context();
  if (!ntv) return fail(EFAULT);
  // As glibc does: a read-only adjtimex, its time and error estimates (and TAI offset) copied.
  // (Not ntp_gettime itself outside a session: in the shim that name is this function.)
  struct timex tx;
  memset(static_cast<void*>(&tx), 0, sizeof tx);
  int r = c ? settime_adjust(*c->seg, false, tx) : libc().adjtimex(&tx);
  ntv->time = tx.time;
  ntv->maxerror = tx.maxerror;
  ntv->esterror = tx.esterror;
  ntv->tai = tx.tai;
  return r;
}

}  // extern "C"
