// C API: sleeps (nanosleep, clock_nanosleep, usleep, sleep). A sleep is "blocked until virtual
// time T" on the thread's own slot; the controller wakes it when the clock reaches T.
#include <vtime/vtime.h>

#include <vtime/internal/context.h>
#include <vtime/internal/cpu_charge.h>
#include "libc.h"
#include <vtime/internal/waits.h>

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {

bool valid(const timespec* ts) { return ts && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L && ts->tv_sec >= 0; }

// Returns 0, or EINTR with *remaining set.
int sleep_until(ProcessContext& c, TimePoint deadline, Duration* remaining) {
  if (deadline <= now(c)) {
    charge_call(c);  // nanosleep(0) and friends: a yield, under --cpu-model calls a charged one
    return 0;
  }
  // The scope ends it as late as a real kernel would (timer_slack.h); what is left after a signal
  // still counts from the deadline asked for.
  WaitScope w(c, deadline, abi::kReasonSleep, abi::kWakeFutex);
  int r = w.block();
  if (r == EINTR && remaining) {
    Duration left = deadline - now(c);
    *remaining = left < Duration::zero() ? Duration::zero() : left;
  }
  return r;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int vtime_settle(void) {
  ProcessContext* c = context();
  if (!c) return -1;
  // A sleep due now: the controller wakes due waits only at an idle point of the tree, and a
  // deadline equal to the clock needs no advance (nor, under the broker, a CALL_ME_LATER).
  // A signal handler running in between ends it early, as it ends any sleep: settle again.
  while (true) {
    WaitScope w(*c, now(*c), abi::kReasonSleep, abi::kWakeFutex);
    if (w.block() != EINTR) return 0;
  }
}

int vtime_nanosleep(const struct timespec* req, struct timespec* rem) {
  ProcessContext* c = context();
  if (!c) return libc().nanosleep(req, rem);
  if (!valid(req)) {
    errno = req ? EINVAL : EFAULT;
    return -1;
  }
  Duration left;
  if (sleep_until(*c, now(*c) + from_timespec(*req), &left) == EINTR) {
    if (rem) *rem = to_timespec(left);
    errno = EINTR;
    return -1;
  }
  return 0;
}

int vtime_clock_nanosleep(clockid_t clk, int flags, const struct timespec* req, struct timespec* rem) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().clock_nanosleep(clk, flags, req, rem);
  if (!valid(req)) return req ? EINVAL : EFAULT;
  bool abs = (flags & TIMER_ABSTIME) != 0;
  TimePoint deadline = abs ? from_clock(*c, clk, *req) : now(*c) + from_timespec(*req);
  Duration left;
  if (sleep_until(*c, deadline, &left) == EINTR) {
    if (rem && !abs) *rem = to_timespec(left);
    return EINTR;
  }
  return 0;
}

int vtime_usleep(useconds_t usec) {
  ProcessContext* c = context();
  if (!c) return libc().usleep(usec);
  if (sleep_until(*c, now(*c) + microseconds(usec), nullptr) == EINTR) {
    errno = EINTR;
    return -1;
  }
  return 0;
}

unsigned int vtime_sleep(unsigned int seconds_) {
  ProcessContext* c = context();
  if (!c) return libc().sleep(seconds_);
  Duration left;
  if (sleep_until(*c, now(*c) + seconds(seconds_), &left) == EINTR) {
    // Like glibc: the unslept seconds, rounded to the nearest second.
    timespec ts = to_timespec(left);
    return static_cast<unsigned>(ts.tv_sec + (ts.tv_nsec >= 500000000L ? 1 : 0));
  }
  return 0;
}

int vtime_sched_yield(void) {
  ProcessContext* c = context();
  if (c) charge_call(*c);  // a yield in a busy-wait loop: charged under --cpu-model calls
  return libc().sched_yield();
}

}  // extern "C"
