// C API: semaphores with virtual deadlines (Python's Lock.acquire(timeout), Event.wait, ...).
//
// Why our own wait loop: a blocked sem_wait cannot be interrupted without a signal, and a
// sem_post from us would hand out a token. glibc's semaphore is a public-ABI 64-bit word (value
// in the low half, waiter count in the high half) and sem_post wakes the futex on the value when
// waiters are counted; we follow exactly glibc's own waiting protocol on that word, and the agent
// wakes the futex at the deadline.
#include <vtime/vtime.h>

#include <vtime/internal/context.h>
#include <vtime/internal/cpu_charge.h>
#include <vtime/internal/futex.h>
#include "libc.h"
#include <vtime/internal/waits.h>

#include <cerrno>

using namespace vtime;
using namespace vtime::detail;

namespace {

struct GlibcSem {  // glibc >= 2.21 on 64-bit targets (sysdeps/nptl/internaltypes.h, struct new_sem)
  std::atomic<uint64_t> data;
  int priv;  // 0: process-private (glibc's LLL_PRIVATE), 128: shared
  int pad;
};
static_assert(sizeof(GlibcSem) <= sizeof(sem_t));
constexpr uint64_t kValueMask = 0xffffffffULL;
constexpr uint64_t kOneWaiter = 1ULL << 32;

// The waiter in slot `slot` only (futex.h, waiter_bit): the others blocked on the semaphore wait on.
void wake_sem(ProcessContext&, uint32_t slot, void* word, uintptr_t priv) { futex_wake_bit(word, priv != 0, waiter_bit(slot)); }

int sem_wait_until(ProcessContext& c, sem_t* sem, TimePoint deadline) {
  auto* s = reinterpret_cast<GlibcSem*>(sem);
  uint64_t d = s->data.load(std::memory_order_relaxed);
  while ((d & kValueMask) > 0) {
    if (s->data.compare_exchange_weak(d, d - 1, std::memory_order_acquire)) return 0;
  }
  if (now(c) >= deadline) {
    charge_call(c);
    errno = ETIMEDOUT;
    return -1;
  }
  bool priv = s->priv == 0;
  s->data.fetch_add(kOneWaiter, std::memory_order_relaxed);
  AgentAction a;
  a.fn = wake_sem;
  a.lost_if_early = true;
  a.arg = &s->data;
  a.arg2 = priv ? 1 : 0;
  int result = 0;
  {
    WaitScope w(c, deadline, abi::kReasonSem, abi::kWakeAgent, &a);
    for (;;) {
      d = s->data.load(std::memory_order_relaxed);
      if ((d & kValueMask) > 0) {
        if (s->data.compare_exchange_weak(d, d - 1 - kOneWaiter, std::memory_order_acquire)) break;
        continue;
      }
      if (w.woken()) {
        s->data.fetch_sub(kOneWaiter, std::memory_order_relaxed);
        result = ETIMEDOUT;
        break;
      }
      long r = futex_wait_bit(&s->data, priv, 0, waiter_bit(w.slot()));
      if (r < 0 && errno == EINTR) {
        s->data.fetch_sub(kOneWaiter, std::memory_order_relaxed);
        result = EINTR;
        break;
      }
    }
  }
  if (result != 0) {
    errno = result;
    return -1;
  }
  return 0;
}

bool valid(const timespec* ts) { return ts && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L; }

}  // namespace

extern "C" {

int vtime_sem_timedwait(sem_t* sem, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c) return libc().sem_timedwait(sem, abstime);
  if (!valid(abstime)) {
    errno = EINVAL;
    return -1;
  }
  return sem_wait_until(*c, sem, from_clock(*c, CLOCK_REALTIME, *abstime));
}

int vtime_sem_clockwait(sem_t* sem, clockid_t clk, const struct timespec* abstime) {
  ProcessContext* c = context();
  if (!c) return libc().sem_clockwait(sem, clk, abstime);
  if ((clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) || !valid(abstime)) {
    errno = EINVAL;
    return -1;
  }
  return sem_wait_until(*c, sem, from_clock(*c, clk, *abstime));
}

}  // extern "C"
