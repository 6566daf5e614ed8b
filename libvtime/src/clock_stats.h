// Per-thread clock-read statistics for decision traces (abi::ThreadStat, docs/trace-format.md).
//
// Every clock read through the shim or the C API bumps the calling thread's count and folds the
// value into its digest: two relaxed loads and stores on a cache line only this thread writes.
// The first read of a thread claims its ThreadStat; the thread gives it back at exit, folding its
// totals into its process slot so nothing read is lost.
#pragma once

#include <vtime/internal/context.h>

namespace vtime::detail {

extern __attribute__((tls_model("initial-exec"))) thread_local abi::ThreadStat* t_clock_stat;
abi::ThreadStat* claim_thread_stat(ProcessContext& c);
// In a forked child: the parent thread's stat is not ours.
void clock_stats_after_fork_child();

inline void count_clock_read(ProcessContext& c, int64_t value) {
  abi::ThreadStat* s = t_clock_stat;
  if (!s) [[unlikely]] s = claim_thread_stat(c);
  s->reads.store(s->reads.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  uint64_t d = s->digest.load(std::memory_order_relaxed);
  s->digest.store((d ^ static_cast<uint64_t>(value)) * abi::kDigestPrime, std::memory_order_relaxed);
}

}  // namespace vtime::detail
