// The per-process view of the session: attachment, process registration, the calling thread's
// slot, and the helpers every family of the C API uses to wait on virtual time.
//
// This is the only process-global state of libvtime (the shim's interposition layer and the C
// API for rewritten programs both need "the session of this process").
#pragma once

#include <vtime/abi.h>
#include <vtime/session.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <time.h>

namespace vtime::detail {

// Exit status of a wrapped process that was told to attach to a session and could not, or
// whose session owner died while it waited (documented in docs/cli.md).
inline constexpr int kExitAttachFailed = 122;

struct ProcessContext {
  Session session;
  abi::Segment* seg;
  uint32_t proc_index;
  pid_t pid;
  // The session's CPU-time model (abi::Header::cpu_*), copied at attach: fixed for the session,
  // and read here on every clock read without touching the segment's busy cache lines.
  uint32_t cpu_model = abi::kCpuZero;
  int64_t cpu_cost_ns = 0;
  int64_t cpu_quantum_ns = 0;
  int64_t cpu_burst_calls = 0;
  int64_t sleep_latency_ns = 0;  // abi::Header::sleep_latency_ns
  int64_t timer_slack_ns = 0;    // abi::Header::timer_slack_ns
};

// The attached context, or nullptr when the environment names no session. The first call
// attaches; a failure to attach prints one line and exits the process (never runs on real time).
// The fast path is inline: every clock read goes through it.
extern std::atomic<ProcessContext*> g_context;
ProcessContext* context_slow();
inline ProcessContext* context() {
  ProcessContext* c = g_context.load(std::memory_order_acquire);
  return c ? c : context_slow();
}
inline bool active() { return context() != nullptr; }

// Who the child this thread is about to fork or spawn is, independently of its pid
// (abi::ProcessSlot::lineage and rank; both 0: not known).
struct ChildId {
  uint64_t lineage = 0;
  uint16_t rank = 0;
};
// Call right before the fork or spawn, pass it to register_child.
ChildId next_child_id();
// The id of the next child of the process in slot `parent` (counts the fork).
ChildId next_child_of(abi::ProcessSlot& parent);
// Registers `pid` (a child just forked or spawned by this process) so that the controller sees
// it before it runs a single instruction of its own.
void register_child(pid_t pid, const ChildId& id);
// Claims (or, for a pid already registered, updates) the process slot of `pid`: `id` all 0 when
// not known (abi::ProcessSlot::lineage). Returns its index, or abi::kNoProcess when the table is
// full. The shim's callers end the process then; the tracer registers traced children with it.
uint32_t try_claim_process_slot(abi::Segment& seg, pid_t pid, pid_t parent, uint64_t start_time, const ChildId& id);
// Called in the child after fork: new process slot, fresh thread state, no agent, no timers.
void after_fork_child();

// Virtual now, and conversions between clock ids and the virtual time line (inline: hot path).
inline TimePoint now(ProcessContext& c) { return Session::read_clock(c.seg->header.clock); }
inline bool is_virtual_clock(clockid_t clk) {
  switch (clk) {
    case CLOCK_REALTIME: case CLOCK_REALTIME_COARSE: case CLOCK_TAI: case CLOCK_REALTIME_ALARM:
    case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW: case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME: case CLOCK_BOOTTIME_ALARM:
      return true;
    default:
      return false;  // CPU-time clocks and dynamic clocks pass through
  }
}
inline bool is_realtime_clock(clockid_t clk) {
  return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_TAI || clk == CLOCK_REALTIME_ALARM;
}
// CLOCK_REALTIME at virtual time 0: the session's epoch plus what the tree's clock sets added.
inline int64_t realtime_base(ProcessContext& c) {
  return c.seg->header.clock.epoch_ns + c.seg->header.clock.realtime_shift_ns.load(std::memory_order_relaxed);
}
inline int64_t clock_base(ProcessContext& c, clockid_t clk) {
  return is_realtime_clock(clk) ? realtime_base(c) : c.seg->header.clock.mono_origin_ns;
}

// The last absolute CLOCK_REALTIME time this thread turned into a virtual instant, and the shift
// it used. A clock set must move such deadlines (and only those) on the virtual time line: the
// wait that registers this very deadline next (WaitScope) marks its slot from here, so the many
// families of timed waits need not carry the clock id down to where the slot is filled.
struct RealtimeMark {
  int64_t deadline = 0;
  int64_t shift = 0;
  bool set = false;
};
extern __attribute__((tls_model("initial-exec"))) thread_local RealtimeMark t_realtime_mark;

// Absolute timespec on clock clk -> virtual instant.
inline TimePoint from_clock(ProcessContext& c, clockid_t clk, const timespec& abs) {
  if (is_realtime_clock(clk)) {
    int64_t shift = c.seg->header.clock.realtime_shift_ns.load(std::memory_order_relaxed);
    TimePoint t = TimePoint::origin() + (from_timespec(abs) - nanoseconds(c.seg->header.clock.epoch_ns + shift));
    t_realtime_mark = RealtimeMark{t.ns(), shift, true};
    return t;
  }
  return TimePoint::origin() + (from_timespec(abs) - nanoseconds(c.seg->header.clock.mono_origin_ns));
}
inline timespec to_clock(ProcessContext& c, clockid_t clk, TimePoint t) {
  int64_t ns = t.ns() + clock_base(c, clk);  // both far from the int64 limits
  return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

// Tells the controller that something changed (a wait began or ended).
void notify_activity(abi::Segment& seg);

// True while the session owner is alive; checked on real-time heartbeats.
bool owner_alive(ProcessContext& c);
[[noreturn]] void die_owner_gone(ProcessContext& c);
// Sleeps while *word == expected (a futex in the segment), waking every real second to check
// that the session owner is still alive (exits loudly if not). Returns 0 or EINTR.
int wait_word(ProcessContext& c, std::atomic<uint32_t>* word, uint32_t expected);
// A sleeper's wait (see abi::ProcessSlot::sleep_word): the same on the process's sleep word with
// the bit of `slot`. The caller reads the word, checks its slot, then calls this.
int sleep_on(ProcessContext& c, uint32_t slot, uint32_t expected);

}  // namespace vtime::detail
