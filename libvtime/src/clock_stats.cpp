// Claiming and giving back per-thread clock statistics (see clock_stats.h).
#include "clock_stats.h"

#include <vtime/internal/futex.h>

#include <pthread.h>

namespace vtime::detail {

__attribute__((tls_model("initial-exec"))) thread_local abi::ThreadStat* t_clock_stat = nullptr;

namespace {

// Where the reads of a thread go when the table is full: counted nowhere, never shared.
__attribute__((tls_model("initial-exec"))) thread_local abi::ThreadStat t_overflow_stat;
pthread_key_t g_stat_key;
pthread_once_t g_stat_once = PTHREAD_ONCE_INIT;

// Thread exit: fold the totals into the process slot (sums: the digest of a process does not
// depend on how its threads interleaved) and free the entry.
void on_thread_exit(void* p) {
  auto* s = static_cast<abi::ThreadStat*>(p);
  ProcessContext* c = g_context.load(std::memory_order_acquire);
  if (!c || s == &t_overflow_stat) return;
  if (s->ignored.load(std::memory_order_relaxed) != 1) {  // 1: a thread left out of the counts
    auto& proc = c->seg->processes[s->process.load(std::memory_order_relaxed)];
    proc.clock_reads.fetch_add(s->reads.load(std::memory_order_relaxed), std::memory_order_relaxed);
    proc.clock_digest.fetch_add(s->digest.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  s->pid.store(0, std::memory_order_relaxed);
  s->tid.store(0, std::memory_order_relaxed);
  s->state.store(0, std::memory_order_release);
  t_clock_stat = &t_overflow_stat;  // a destructor that reads the clock after this
}

void make_key() { pthread_key_create(&g_stat_key, on_thread_exit); }

}  // namespace

abi::ThreadStat* claim_thread_stat(ProcessContext& c) {
  pid_t tid = gettid_raw();
  for (auto& s : c.seg->thread_stats) {
    uint32_t expected = 0;
    if (s.state.load(std::memory_order_relaxed) == 0 &&
        s.state.compare_exchange_strong(expected, 2, std::memory_order_acq_rel)) {
      s.pid.store(c.pid, std::memory_order_relaxed);
      s.tid.store(tid, std::memory_order_relaxed);
      s.process.store(c.proc_index, std::memory_order_relaxed);
      s.ignored.store(0, std::memory_order_relaxed);
      s.reads.store(0, std::memory_order_relaxed);
      s.digest.store(abi::kDigestBasis, std::memory_order_relaxed);
      s.state.store(1, std::memory_order_release);
      t_clock_stat = &s;
      pthread_once(&g_stat_once, make_key);
      pthread_setspecific(g_stat_key, &s);
      return &s;
    }
  }
  t_clock_stat = &t_overflow_stat;
  return &t_overflow_stat;
}

void clock_stats_after_fork_child() {
  // The forking thread's entry belongs to the parent: neither count into it nor free it at exit.
  if (t_clock_stat && t_clock_stat != &t_overflow_stat) pthread_setspecific(g_stat_key, nullptr);
  t_clock_stat = nullptr;
}

}  // namespace vtime::detail
