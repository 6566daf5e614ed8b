// The futex floor of the 1,000-sleeper wake-up (see futex_floor.h).
#include "futex_floor.h"

#include "raw_clock.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>
#include <cstdint>

namespace bench {
namespace {

constexpr int kMaxProcesses = 16;

struct FloorBoard {
  alignas(64) std::atomic<uint32_t> word[kMaxProcesses];  // one sleep word per process
  alignas(64) std::atomic<uint32_t> ready;                // threads that reached their first wait
  alignas(64) std::atomic<uint32_t> done;                 // wake-ups recorded this round
  alignas(64) std::atomic<int64_t> last_ns;               // latest recorded wake-up this round
};

long futex(void* addr, int op, uint32_t val, const timespec* ts, uint32_t val3) {
  return syscall(SYS_futex, addr, op, val, ts, nullptr, val3);
}

struct ThreadArg {
  FloorBoard* board;
  int process;
  int index;
};

void* waiter(void* p) {
  auto* a = static_cast<ThreadArg*>(p);
  FloorBoard& b = *a->board;
  std::atomic<uint32_t>& word = b.word[a->process];
  uint32_t bit = 1u << (a->index % 32);
  uint32_t seen = word.load(std::memory_order_acquire);
  b.ready.fetch_add(1, std::memory_order_acq_rel);
  for (;;) {
    while (word.load(std::memory_order_acquire) == seen) {
      // The heartbeat's deadline from the vDSO, as libvtime computes it (not under the shim here).
      timespec hb{};
      clock_gettime(CLOCK_MONOTONIC, &hb);
      hb.tv_sec += 1;
      futex(&word, FUTEX_WAIT_BITSET, seen, &hb, bit);
    }
    seen = word.load(std::memory_order_acquire);
    int64_t t = raw_monotonic_ns();  // as bench_sleeper records its wake-ups
    int64_t l = b.last_ns.load(std::memory_order_relaxed);
    while (t > l && !b.last_ns.compare_exchange_weak(l, t, std::memory_order_acq_rel)) {
    }
    b.done.fetch_add(1, std::memory_order_acq_rel);
  }
  return nullptr;
}

}  // namespace

std::vector<double> futex_wake_floor(int processes, int threads, int rounds) {
  std::vector<double> out;
  if (processes < 1 || processes > kMaxProcesses || threads < 1) return out;
  void* mem = mmap(nullptr, sizeof(FloorBoard), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return out;
  auto* b = new (mem) FloorBoard{};
  std::vector<pid_t> kids;
  pid_t parent = getpid();
  for (int p = 0; p < processes; ++p) {
    pid_t k = fork();
    if (k < 0) break;
    if (k == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setstacksize(&attr, 128 * 1024);
      static ThreadArg args[4096];
      for (int i = 0; i < threads && i < 4096; ++i) {
        args[i] = {b, p, i};
        pthread_t t;
        if (pthread_create(&t, &attr, waiter, &args[i]) != 0) _exit(1);
      }
      for (;;) pause();
    }
    kids.push_back(k);
  }
  const uint32_t all = static_cast<uint32_t>(processes * threads);
  int64_t give_up = raw_monotonic_ns() + 10000000000LL;
  bool ok = static_cast<int>(kids.size()) == processes;
  while (ok && b->ready.load(std::memory_order_acquire) < all) {
    if (raw_monotonic_ns() > give_up) ok = false;
    usleep(1000);
  }
  for (int r = 0; ok && r < rounds; ++r) {
    // Every waiter back in its futex call (counted as the controller counts sleepers: a
    // FUTEX_CMP_REQUEUE onto the same word, which moves and wakes nobody), looking in a loop as
    // the controller does, so that the cpus are as warm as in the vtime figure.
    for (;;) {
      long queued = 0;
      for (int p = 0; p < processes; ++p) {
        queued += syscall(SYS_futex, &b->word[p], FUTEX_CMP_REQUEUE, 0, reinterpret_cast<void*>(INT_MAX), &b->word[p],
                          b->word[p].load());
      }
      if (queued == static_cast<long>(all) || raw_monotonic_ns() > give_up + 60000000000LL) break;
      sched_yield();
    }
    b->done.store(0);
    b->last_ns.store(0);
    int64_t t0 = raw_monotonic_ns();
    for (int p = 0; p < processes; ++p) {
      b->word[p].fetch_add(1, std::memory_order_acq_rel);
      futex(&b->word[p], FUTEX_WAKE_BITSET, INT_MAX, nullptr, FUTEX_BITSET_MATCH_ANY);
    }
    while (b->done.load(std::memory_order_acquire) < all) {
      if (raw_monotonic_ns() > give_up + 60000000000LL) {
        ok = false;
        break;
      }
      usleep(100);
    }
    if (ok) out.push_back(static_cast<double>(b->last_ns.load() - t0) / 1e6);
  }
  for (pid_t k : kids) kill(k, SIGKILL);
  for (pid_t k : kids) waitpid(k, nullptr, 0);
  munmap(mem, sizeof(FloorBoard));
  if (!ok) out.clear();
  return out;
}

}  // namespace bench
