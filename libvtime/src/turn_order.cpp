// The serial gate's turn order (see turn_order.h).
#include "turn_order.h"

#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>
#include <vtime/log.h>
#include <vtime/session.h>

#include <climits>
#include <optional>
#include <string>

namespace vtime::detail {

TurnOrder::Turn TurnOrder::turn_of(pid_t pid) const {
  if (pid == root_) return {0, 0, pid};
  for (uint32_t i = 0, n = process_limit(seg_); i < n; ++i) {
    const auto& p = seg_.processes[i];
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive || p.pid.load(std::memory_order_relaxed) != pid) continue;
    uint32_t rank = p.rank.load(std::memory_order_relaxed);
    if (rank != 0) return {rank, p.lineage.load(std::memory_order_relaxed), pid};
    break;
  }
  return {UINT32_MAX, 0, pid};
}

pid_t TurnOrder::first_turn(const std::vector<pid_t>& pids) const {
  pid_t best = 0;
  std::optional<Turn> best_turn;
  for (pid_t pid : pids) {
    if (pid == best) continue;
    if (best == 0) {
      best = pid;
      continue;
    }
    if (!best_turn) best_turn = turn_of(best);
    Turn t = turn_of(pid);
    if (t < *best_turn) {
      best = pid;
      best_turn = t;
    }
  }
  return best;
}

bool TurnOrder::hand_over() {
  auto& h = seg_.header;
  if (h.serial.load(std::memory_order_acquire) == 0) return false;
  std::vector<pid_t> held;
  std::vector<pid_t> held_tids;  // the tracer's threads, by pid and in their process's order
  for (uint32_t i = 0; i < abi::kSerialHeld; ++i) {  // the tracer's
    pid_t pid = h.serial_held[i].load(std::memory_order_acquire);
    if (pid == 0) break;
    held.push_back(pid);
    held_tids.push_back(h.serial_held_tid[i].load(std::memory_order_acquire));
  }
  const size_t traced = held.size();
  for (uint32_t i = 0, n = process_limit(seg_); i < n; ++i) {  // the shim's
    auto& p = seg_.processes[i];
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive || p.held.load(std::memory_order_acquire) == 0) continue;
    held.push_back(p.pid.load(std::memory_order_relaxed));
  }
  pid_t next = first_turn(held);
  // A traced process gets the tree for its first held thread only (see abi::Header).
  pid_t thread = 0;
  for (size_t i = 0; i < traced; ++i) {
    if (held[i] == next) {
      thread = held_tids[i];
      break;
    }
  }
  give_tree(next != 0 ? next : -1, thread);
  // The sequence of hand-overs is where two runs of a serialised tree first part (which process
  // was woken by what another one did in its turn): VTIME_LOG=controller=debug, then diff.
  if (log_enabled("controller", LogLevel::kDebug)) {
    std::string names;
    for (pid_t pid : held) names += " " + std::to_string(pid) + ":" + proc_.process_name(pid);
    VTIME_LOGF("controller", LogLevel::kDebug, "hand-over at %lld ns: held%s -> %d:%s (thread %d)",
               static_cast<long long>(Session::read_clock(seg_.header.clock).ns()), names.c_str(), static_cast<int>(next),
               next != 0 ? proc_.process_name(next).c_str() : "", static_cast<int>(thread));
  }
  if (next == 0) return false;
  h.serial_handovers.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void TurnOrder::give_tree(pid_t pid, pid_t thread) {
  auto& h = seg_.header;
  if (h.serial.load(std::memory_order_acquire) == 0) return;
  // Before the process: a thread that sees the new process sees its thread too.
  h.serial_thread.store(thread, std::memory_order_release);
  h.serial_active.store(pid, std::memory_order_release);
  h.serial_word.fetch_add(1, std::memory_order_acq_rel);
  futex_wake(&h.serial_word);
  // What the next looks compare with what they saw before: a hand-over starts afresh.
  h.activity.fetch_add(1, std::memory_order_seq_cst);
}

}  // namespace vtime::detail
