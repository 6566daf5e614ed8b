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
// `tag` goes into the fifth argument, which FUTEX_WAIT ignores: it only shows in
// /proc/TID/syscall, where a tag unique to each call lets the controller tell one blocked call
// from the next one made with the same arguments (see wait_word).
inline int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* rel_timeout,
                      bool shared = true, uint64_t tag = 0) {
  int op = FUTEX_WAIT | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  long r = raw_futex(reinterpret_cast<void*>(word), op, expected, rel_timeout,
                     reinterpret_cast<void*>(static_cast<uintptr_t>(tag)), 0);
  if (r == 0) return 0;
  if (errno == EAGAIN) return 0;
  return errno;
}

// Waits while *word == expected, until an absolute CLOCK_MONOTONIC (real) time, for a wake-up
// whose bitset meets `bits`. Returns 0 (woken or value changed), EINTR, or ETIMEDOUT.
inline int futex_wait_bitset(std::atomic<uint32_t>* word, uint32_t expected, const timespec* abs_deadline,
                             uint32_t bits) {
  long r = raw_futex(reinterpret_cast<void*>(word), FUTEX_WAIT_BITSET, expected, abs_deadline, nullptr, bits);
  if (r == 0) return 0;
  if (errno == EAGAIN) return 0;
  return errno;
}

// Wakes every waiter of a shared `word` whose bitset meets `bits`; returns how many (-1 on error).
inline long futex_wake_bitset(std::atomic<uint32_t>* word, uint32_t bits) {
  return raw_futex(reinterpret_cast<void*>(word), FUTEX_WAKE_BITSET, static_cast<uint32_t>(INT_MAX), nullptr, nullptr, bits);
}

// Returns how many tasks it woke (-1 on error).
inline long futex_wake(std::atomic<uint32_t>* word, int count = INT_MAX, bool shared = true) {
  int op = FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG);
  return raw_futex(reinterpret_cast<void*>(word), op, static_cast<uint32_t>(count), nullptr, nullptr, 0);
}

// How many tasks are queued in a futex wait on `word` (a shared word), without waking any:
// FUTEX_CMP_REQUEUE with nothing to wake, requeueing every waiter onto the same word. The kernel
// returns the number of waiters it woke or requeued, and requeueing onto the same futex key
// leaves each waiter where it is (same hash bucket: only its key is rewritten, to the same
// value). Returns -1 when *word != expected (EAGAIN) or on error.
// A queued task has not returned to user space since it entered that wait: it takes itself off
// the queue before it leaves the system call, whatever woke it (a signal, a timeout).
inline long futex_waiters(std::atomic<uint32_t>* word, uint32_t expected) {
  return raw_futex(reinterpret_cast<void*>(word), FUTEX_CMP_REQUEUE, 0,
                   reinterpret_cast<const timespec*>(static_cast<uintptr_t>(INT_MAX)), reinterpret_cast<void*>(word),
                   expected);
}

// Wake on an arbitrary user address (semaphores, mutexes, futex words of the program).
inline void futex_wake_addr(void* addr, bool priv, int count = INT_MAX) {
  raw_futex(addr, FUTEX_WAKE | (priv ? FUTEX_PRIVATE_FLAG : 0), static_cast<uint32_t>(count), nullptr, nullptr, 0);
}

// A waiter's own bit on a word it shares with other waiters of the program (a semaphore, a
// mutex), so that a timeout wakes that waiter rather than all of them: it waits with its bit, our
// wake at its deadline names the bit, and glibc's own wakes (FUTEX_WAKE, which matches every bit)
// still wake any waiter. Only for words whose other wakers are glibc's: a program's own
// FUTEX_WAKE_BITSET could miss a waiter whose bit it does not name. Why: with one bit for all,
// each timeout of one of N threads blocked on one lock woke all N (seen: test_queue's 50
// consumers polling a queue with 10 us timeouts, ~50 context switches per advance).
// Slots 32 apart share a bit, and glibc's own untimed waiters match every bit: those wake
// spuriously, as all waiters did before, see nothing for them, and wait again.
inline uint32_t waiter_bit(uint32_t slot) { return 1u << (slot % 32); }

inline long futex_wait_bit(void* addr, bool priv, uint32_t val, uint32_t bit) {
  return raw_futex(addr, FUTEX_WAIT_BITSET | (priv ? FUTEX_PRIVATE_FLAG : 0), val, nullptr, nullptr, bit);
}

inline void futex_wake_bit(void* addr, bool priv, uint32_t bit) {
  raw_futex(addr, FUTEX_WAKE_BITSET | (priv ? FUTEX_PRIVATE_FLAG : 0), static_cast<uint32_t>(INT_MAX), nullptr, nullptr,
            bit);
}

inline pid_t gettid_raw() { return static_cast<pid_t>(raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0)); }

}  // namespace vtime::detail
