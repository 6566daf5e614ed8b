// C API: condition variables with virtual deadlines. The thread blocks in the real, untimed
// pthread_cond_wait; at the deadline the agent broadcasts the condition (a spurious wake-up,
// which POSIX allows), and the wait reports ETIMEDOUT because the virtual clock has reached it.
#include <vtime/vtime.h>

#include <vtime/internal/context.h>
#include <vtime/internal/cpu_charge.h>
#include "libc.h"
#include <vtime/internal/waits.h>

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {

void broadcast(ProcessContext&, uint32_t, void* cond, uintptr_t) {
  pthread_cond_broadcast(static_cast<pthread_cond_t*>(cond));
}

int cond_wait_until(ProcessContext& c, pthread_cond_t* cond, pthread_mutex_t* mutex, TimePoint deadline) {
  if (now(c) >= deadline) {
    charge_call(c);
    return ETIMEDOUT;
  }
  AgentAction a;
  a.fn = broadcast;
  a.lost_if_early = true;
  a.arg = cond;
  int r;
  {
    WaitScope w(c, deadline, abi::kReasonCond, abi::kWakeAgent, &a);
    r = libc().pthread_cond_wait(cond, mutex);
  }
  if (r != 0) return r;
  return now(c) >= deadline ? ETIMEDOUT : 0;
}

// glibc keeps the condition's clock in bit 1 of __wrefs (set by pthread_condattr_setclock).
clockid_t cond_clock(const pthread_cond_t* cond) {
  unsigned wrefs = __atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED);
  return (wrefs & 2u) != 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

bool valid(const timespec* ts) { return ts && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L; }

}  // namespace

extern "C" {

int vtime_pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c) return libc().pthread_cond_timedwait(cond, mutex, abstime);
  if (!valid(abstime)) return EINVAL;
  return cond_wait_until(*c, cond, mutex, from_clock(*c, cond_clock(cond), *abstime));
}

int vtime_pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clk,
                                 const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c) return libc().pthread_cond_clockwait(cond, mutex, clk, abstime);
  if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) return EINVAL;
  if (!valid(abstime)) return EINVAL;
  return cond_wait_until(*c, cond, mutex, from_clock(*c, clk, *abstime));
}

}  // extern "C"
