// The board shared between a benchmark's controller process and its bench_sleeper children: each
// sleeper thread writes there the real time at which it ran after each virtual wake-up.
//
// It lives in a memfd the controller creates and the children inherit (its number is passed on
// the command line). Plain standard-layout atomics, like the session segment itself. The
// sleepers run under the shim, where syscall() is interposed, so the futex used to tell the
// controller "everyone has reported" is entered with inline assembly.
//
// Example (controller):
//     SleeperBoard* b = map_board(fd);
//     b->done_target.store(1000);  ... advance ...  wait_done(*b, 1000, 5'000'000'000);
#pragma once

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "raw_clock.h"

namespace bench {

inline constexpr uint32_t kMaxSleepers = 4096;

struct alignas(64) SleeperRecord {
  std::atomic<int64_t> woke_ns;       // raw CLOCK_MONOTONIC right after the latest wake-up
  std::atomic<uint32_t> rounds_done;  // wake-ups seen so far
};

struct SleeperBoard {
  alignas(64) std::atomic<uint32_t> ready;  // threads that reached their first sleep
  alignas(64) std::atomic<uint32_t> done;   // wake-ups recorded by all threads (futex word)
  std::atomic<uint32_t> done_target;        // wake the controller when done reaches this
  SleeperRecord rec[kMaxSleepers];
};

static_assert(std::is_standard_layout_v<SleeperBoard>);
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free);

inline long raw_futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) {
  long ret = 0;
  register long r10 __asm__("r10") = reinterpret_cast<long>(ts);
  register long r8 __asm__("r8") = 0;
  register long r9 __asm__("r9") = 0;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(static_cast<long>(SYS_futex)), "D"(reinterpret_cast<long>(word)), "S"(static_cast<long>(op)),
                     "d"(static_cast<long>(val)), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

inline SleeperBoard* map_board(int fd) {
  void* p = mmap(nullptr, sizeof(SleeperBoard), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<SleeperBoard*>(p);
}

// Sleeper side: one more wake-up recorded; the one that reaches the target wakes the controller.
inline void record_wake(SleeperBoard& b, uint32_t index, int64_t woke_ns) {
  b.rec[index].woke_ns.store(woke_ns, std::memory_order_relaxed);
  b.rec[index].rounds_done.fetch_add(1, std::memory_order_release);
  uint32_t now_done = b.done.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (now_done == b.done_target.load(std::memory_order_acquire)) raw_futex(&b.done, FUTEX_WAKE, 1, nullptr);
}

// Controller side: blocks until `done` reaches target or limit_ns of real time passed.
inline bool wait_done(SleeperBoard& b, uint32_t target, int64_t limit_ns) {
  int64_t end = raw_monotonic_ns() + limit_ns;
  for (;;) {
    uint32_t v = b.done.load(std::memory_order_acquire);
    if (v >= target) return true;
    int64_t left = end - raw_monotonic_ns();
    if (left <= 0) return false;
    timespec ts{0, left > 100000000 ? 100000000 : left};
    raw_futex(&b.done, FUTEX_WAIT, v, &ts);
  }
}

}  // namespace bench
