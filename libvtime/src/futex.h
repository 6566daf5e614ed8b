// Raw futex calls on shared (cross-process) or private words. Never goes through libc wrappers
// that the shim interposes.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>

namespace vtime::detail {

// A system call that never goes through libc's syscall(): inside the shim, syscall() is our own
// interposed version. Returns the kernel's result (negative errno on failure).
inline long raw_syscall6(long n, long a1, long a2, long a3, long a4, long a5, long a6) {
#if defined(__x86_64__)
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
#else
  long r = ::syscall(n, a1, a2, a3, a4, a5, a6);
  return r == -1 ? -errno : r;
#endif
}

// Sets errno like libc on failure and returns -1, or the result.
inline long raw_futex(void* addr, int op, uint32_t val, const timespec* ts, void* addr2, uint32_t val3) {
  long r = raw_syscall6(SYS_futex, reinterpret_cast<long>(addr), op, static_cast<long>(val),
                        reinterpret_cast<long>(ts), reinterpret_cast<long>(addr2), static_cast<long>(val3));
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return r;
}

// Waits while *word == expected. rel_timeout is real time (a heartbeat), null for none.
// Returns 0 (woken or value changed), EINTR, or ETIMEDOUT.
inline int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* rel_timeout,
                      bool shared = true) {
  int op = FUTEX_WAIT | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  long r = raw_futex(reinterpret_cast<void*>(word), op, expected, rel_timeout, nullptr, 0);
  if (r == 0) return 0;
  if (errno == EAGAIN) return 0;
  return errno;
}

inline void futex_wake(std::atomic<uint32_t>* word, int count = INT_MAX, bool shared = true) {
  int op = FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  raw_futex(reinterpret_cast<void*>(word), op, static_cast<uint32_t>(count), nullptr, nullptr, 0);
}

// Wake on an arbitrary user address (semaphores, mutexes, futex words of the program).
inline void futex_wake_addr(void* addr, bool priv, int count = INT_MAX) {
  raw_futex(addr, FUTEX_WAKE | (priv ? FUTEX_PRIVATE_FLAG : 0), static_cast<uint32_t>(count), nullptr, nullptr, 0);
}

inline pid_t gettid_raw() { return static_cast<pid_t>(raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0)); }

}  // namespace vtime::detail
