// C API: syscall(2) for the time-related numbers programs issue directly (libstdc++'s
// future::wait_for and counting_semaphore use SYS_futex with an absolute timeout; Go-style
// runtimes call clock_gettime/nanosleep as raw syscalls). Other numbers pass straight through.
#include <vtime/vtime.h>

#include <vtime/internal/context.h>
#include <vtime/internal/cpu_charge.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/waits.h>

#include <sys/syscall.h>

#include <cerrno>
#include <cstdarg>

using namespace vtime;
using namespace vtime::detail;

namespace {

long ret_errno(long kernel_result) {
  if (kernel_result < 0 && kernel_result > -4096) {
    errno = static_cast<int>(-kernel_result);
    return -1;
  }
  return kernel_result;
}

// libc-style result (-1 + errno) from an "error number" style result.
long from_errnum(int e) {
  if (e == 0) return 0;
  errno = e;
  return -1;
}

void wake_futex(ProcessContext&, uint32_t, void* addr, uintptr_t priv) { futex_wake_addr(addr, priv != 0); }

long timed_futex(ProcessContext& c, uint32_t* uaddr, int op, uint32_t val, const timespec* timeout, uint32_t* uaddr2,
                 uint32_t val3) {
  int cmd = op & FUTEX_CMD_MASK;
  bool priv = (op & FUTEX_PRIVATE_FLAG) != 0;
  TimePoint deadline;
  if (cmd == FUTEX_WAIT) {
    deadline = now(c) + from_timespec(*timeout);  // relative, on CLOCK_MONOTONIC
  } else {
    clockid_t clk = (op & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    deadline = from_clock(c, clk, *timeout);
  }
  if (__atomic_load_n(uaddr, __ATOMIC_SEQ_CST) != val) {
    errno = EAGAIN;
    return -1;
  }
  if (now(c) >= deadline) {
    charge_call(c);
    errno = ETIMEDOUT;
    return -1;
  }
  AgentAction a;
  a.fn = wake_futex;
  a.lost_if_early = true;
  a.arg = uaddr;
  a.arg2 = priv ? 1 : 0;
  long r;
  bool timed_out;
  {
    WaitScope w(c, deadline, abi::kReasonFutex, abi::kWakeAgent, &a);
    r = raw_syscall6(SYS_futex, reinterpret_cast<long>(uaddr), op & ~FUTEX_CLOCK_REALTIME, val, 0,
                     reinterpret_cast<long>(uaddr2), val3);
    timed_out = w.woken();
  }
  if (r == 0 && timed_out) {
    errno = ETIMEDOUT;
    return -1;
  }
  return ret_errno(r);
}

}  // namespace

extern "C" long vtime_syscall(long n, ...) {
  va_list ap;
  va_start(ap, n);
  long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
  long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
  va_end(ap);
  ProcessContext* c = context();
  if (c) {
    switch (n) {
      case SYS_clock_gettime:
        return vtime_clock_gettime(static_cast<clockid_t>(a1), reinterpret_cast<timespec*>(a2));
      case SYS_gettimeofday:
        return vtime_gettimeofday(reinterpret_cast<timeval*>(a1), reinterpret_cast<void*>(a2));
      case SYS_time:
        return vtime_time(reinterpret_cast<time_t*>(a1));
      case SYS_clock_settime:
        return vtime_clock_settime(static_cast<clockid_t>(a1), reinterpret_cast<const timespec*>(a2));
      case SYS_settimeofday:
        return vtime_settimeofday(reinterpret_cast<const timeval*>(a1), reinterpret_cast<const void*>(a2));
      case SYS_adjtimex:
        return vtime_adjtimex(reinterpret_cast<struct timex*>(a1));
      case SYS_clock_adjtime:
        return vtime_clock_adjtime(static_cast<clockid_t>(a1), reinterpret_cast<struct timex*>(a2));
      case SYS_nanosleep:
        return vtime_nanosleep(reinterpret_cast<const timespec*>(a1), reinterpret_cast<timespec*>(a2));
      case SYS_clock_nanosleep:
        return from_errnum(vtime_clock_nanosleep(static_cast<clockid_t>(a1), static_cast<int>(a2),
                                                 reinterpret_cast<const timespec*>(a3), reinterpret_cast<timespec*>(a4)));
      case SYS_futex: {
        int cmd = static_cast<int>(a2) & FUTEX_CMD_MASK;
        if ((cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) && a4 != 0) {
          return timed_futex(*c, reinterpret_cast<uint32_t*>(a1), static_cast<int>(a2), static_cast<uint32_t>(a3),
                             reinterpret_cast<const timespec*>(a4), reinterpret_cast<uint32_t*>(a5),
                             static_cast<uint32_t>(a6));
        }
        break;
      }
      default:
        break;
    }
  }
  return ret_errno(raw_syscall6(n, a1, a2, a3, a4, a5, a6));
}
