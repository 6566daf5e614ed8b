// Attachment, process registration and clock conversions (see context.h).
#include <vtime/internal/context.h>
#include <vtime/internal/trace_request.h>

#include <vtime/internal/futex.h>
#include "libc.h"
#include "proc_stat.h"
#include <vtime/internal/process.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/waits.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

// Marks an executable that links libvtime itself (a program rewritten by `vtime rewrite`, linked
// statically): it makes its own waits virtual, so the tracer must leave it alone, whatever its
// ELF headers say (trace_request.cpp looks for this section). In this file because every program
// using libvtime links it.
extern "C" __attribute__((used, retain, section(".vtime_aware"))) const char vtime_aware_marker[] = "libvtime";

namespace vtime::detail {
namespace {

std::atomic<int> g_state{0};  // 0 not tried, 1 attaching, 2 done (g_context may still be null)

// /proc/PID/stat's state letter and start time; false when the process does not exist.
bool read_proc_stat(pid_t pid, char* state, uint64_t* start) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = libc().read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  return parse_proc_stat(buf, state, nullptr, start);
}

uint64_t read_start_time(pid_t pid) {
  uint64_t start = 0;
  return read_proc_stat(pid, nullptr, &start) ? start : 0;
}

}  // namespace

uint32_t try_claim_process_slot(abi::Segment& seg, pid_t pid, pid_t parent, uint64_t start_time, const ChildId& id) {
  for (uint32_t i = 0, n = process_limit(seg); i < n; ++i) {
    auto& p = seg.processes[i];
    if (p.state.load(std::memory_order_acquire) == abi::kProcessLive && p.pid.load() == pid) {
      // The same process after exec (its agent, if it had one, is gone with the old image), or
      // a child that registered itself before its parent announced it.
      p.agent_tid.store(0);
      if (start_time != 0) p.start_time.store(start_time);
      if (id.rank != 0) {
        p.lineage.store(id.lineage);
        p.rank.store(id.rank);
      }
      return i;
    }
  }
  auto& high = seg.header.process_high;
  for (uint32_t i = 0; i < abi::kProcessSlots; ++i) {
    auto& p = seg.processes[i];
    if (p.state.load(std::memory_order_relaxed) != abi::kProcessFree) continue;
    // Raised before the claim: a scan that sees the slot in use also sees it within the limit.
    uint32_t h = high.load(std::memory_order_seq_cst);
    while (h <= i && !high.compare_exchange_weak(h, i + 1, std::memory_order_seq_cst)) {
    }
    uint32_t expected = abi::kProcessFree;
    // Filling: the controller never acts on a half-written slot (abi::ProcessState).
    if (p.state.compare_exchange_strong(expected, abi::kProcessFilling, std::memory_order_acq_rel)) {
      p.pid.store(pid);
      p.parent.store(parent);
      p.start_time.store(start_time);
      p.clock_reads.store(0);
      p.clock_digest.store(0);
      p.agent_tid.store(0);
      p.lineage.store(id.lineage);
      p.rank.store(id.rank);
      p.forks.store(0);
      p.held.store(0);
      p.state.store(abi::kProcessLive, std::memory_order_release);
      notify_activity(seg);
      return i;
    }
  }
  return abi::kNoProcess;
}

namespace {

uint32_t claim_process_slot(abi::Segment& seg, pid_t pid, pid_t parent, uint64_t start_time, const ChildId& id) {
  uint32_t i = try_claim_process_slot(seg, pid, parent, start_time, id);
  if (i != abi::kNoProcess) return i;
  fprintf(stderr, "vtime: process table full (%u processes)\n", abi::kProcessSlots);
  _exit(kExitAttachFailed);
}

// A program starts with one thread and no wait of its own: a waiter slot that names its pid is
// the previous image's (an exec ended its threads) or a dead process's whose pid it reuses. The
// controller frees the slots of threads that are gone, but not this one when a thread other than
// the main one executed the program: the main thread's id is the pid, which the executing thread
// took over, so its slot would keep a deadline or a wake-up no one takes for ever
// (tests/programs/thread_exec.c). Its agent, which ran the old image's timers, is gone too.
// Timers the tracer keeps for a traced process (tracer/timers.h) are the process's, not the
// image's: an alarm and a timerfd outlive execve, and the tracer drops what an exec ends.
void free_waits_of_old_image(abi::Segment& seg, pid_t pid) {
  bool freed = false;
  for (uint32_t i = 0, n = waiter_limit(seg); i < n; ++i) {
    auto& w = seg.waiters[i];
    if (w.is_timer.load(std::memory_order_relaxed) != 0 && w.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer) {
      continue;
    }
    if (w.state.load(std::memory_order_acquire) != abi::kFree && w.pid.load(std::memory_order_relaxed) == pid) {
      free_slot(w);
      freed = true;
    }
  }
  if (freed) notify_activity(seg);
}

void do_attach() {
  const char* spec = getenv(kSessionEnv);
  if (!spec) return;
  try {
    Session s = Session::attach(spec);
    abi::Segment* seg = &s.segment();
    pid_t pid = getpid();
    // The lineage is the announcing parent's to give (register_child): a child that attaches
    // first leaves it 0 for the parent to fill in. Children of glibc-internal clones (system(),
    // popen()) are never announced and keep 0: the recorder names them by pid.
    uint32_t idx = claim_process_slot(*seg, pid, getppid(), read_start_time(pid), ChildId{});
    free_waits_of_old_image(*seg, pid);
    auto* c = new ProcessContext{std::move(s), seg, idx, pid};
    // Registered only now: if vtime died meanwhile, its tracer's last look at the process table
    // (Tracer::end_orphaned_tree) may have come before, and no one would ever end this process.
    if (!owner_alive(*c)) die_owner_gone(*c);
    c->cpu_model = seg->header.cpu_model.load(std::memory_order_relaxed);
    c->cpu_cost_ns = seg->header.cpu_cost_ns.load(std::memory_order_relaxed);
    c->cpu_quantum_ns = seg->header.cpu_quantum_ns.load(std::memory_order_relaxed);
    c->cpu_burst_calls = seg->header.cpu_burst_calls.load(std::memory_order_relaxed);
    c->sleep_latency_ns = seg->header.sleep_latency_ns.load(std::memory_order_relaxed);
    c->timer_slack_ns = seg->header.timer_slack_ns.load(std::memory_order_relaxed);
    g_context.store(c, std::memory_order_release);
    install_fork_handlers();
    // A process that may set the time gets the clock guard: its raw clock-setting system calls,
    // which no interposition sees, must not reach the host's clock (trace_request.h).
    install_clock_guard();
  } catch (const SessionError& e) {
    fprintf(stderr, "vtime: cannot attach to the virtual-time session: %s\n", e.what());
    _exit(kExitAttachFailed);
  } catch (const std::exception& e) {
    fprintf(stderr, "vtime: cannot attach to the virtual-time session: %s\n", e.what());
    _exit(kExitAttachFailed);
  }
}

}  // namespace

std::atomic<ProcessContext*> g_context{nullptr};

ProcessContext* context_slow() {
  int st = g_state.load(std::memory_order_acquire);
  if (st == 2) return nullptr;
  int expected = 0;
  if (g_state.compare_exchange_strong(expected, 1)) {
    do_attach();
    g_state.store(2, std::memory_order_release);
  } else {
    // The raw call: the shim's sched_yield would ask for the context again.
    while (g_state.load(std::memory_order_acquire) != 2) raw_syscall6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
  }
  return g_context.load(std::memory_order_acquire);
}

namespace {
// Who the calling thread's next child is (set before the fork: the child, a copy of this thread,
// reads it in after_fork_child).
thread_local ChildId t_child;
}  // namespace

ChildId next_child_of(abi::ProcessSlot& parent) {
  uint32_t rank = parent.forks.fetch_add(1) + 1;
  return ChildId{abi::child_lineage(parent.lineage.load(), rank), static_cast<uint16_t>(std::min<uint32_t>(rank, 0xffff))};
}

ChildId next_child_id() {
  ProcessContext* c = context();
  if (!c) return {};
  t_child = next_child_of(c->seg->processes[c->proc_index]);
  return t_child;
}

void register_child(pid_t pid, const ChildId& id) {
  ProcessContext* c = context();
  if (!c || pid <= 0) return;
  claim_process_slot(*c->seg, pid, c->pid, 0, id);
}

void after_fork_child() {
  ProcessContext* c = g_context.load(std::memory_order_acquire);
  if (!c) return;
  pid_t pid = getpid();
  c->pid = pid;
  c->proc_index = claim_process_slot(*c->seg, pid, getppid(), read_start_time(pid), t_child);
}

void notify_activity(abi::Segment& seg) {
  auto& h = seg.header;
  h.activity.fetch_add(1, std::memory_order_seq_cst);
  // Only the first thread to see the controller waiting wakes it: taking the flag (instead of
  // reading it) spares every other thread the system call while the controller gets back on a
  // cpu, which takes long when a thousand sleepers just woke at once. No wake-up is lost: the
  // controller sets the flag, then re-reads `activity` before sleeping (both seq_cst, as here),
  // so either it sees this thread's bump and does not sleep, or this exchange sees its flag.
  if (h.controller_waiting.load(std::memory_order_seq_cst) != 0 &&
      h.controller_waiting.exchange(0, std::memory_order_seq_cst) != 0) {
    h.controller_word.fetch_add(1, std::memory_order_acq_rel);
    futex_wake(&h.controller_word, 1);
  }
}

bool owner_alive(ProcessContext& c) {
  pid_t owner = c.seg->header.owner_pid;
  if (::kill(owner, 0) != 0 && errno == ESRCH) return false;
  // A dead owner stays a zombie until its parent reaps it, which may wait for our output to end
  // (a pipe we hold): a zombie is gone too (found by tests/reliability/faults.py).
  char state = 0;
  return !read_proc_stat(owner, &state, nullptr) || (state != 'Z' && state != 'X');
}

int wait_word(ProcessContext& c, std::atomic<uint32_t>* word, uint32_t expected) {
  uint64_t& calls = thread_state().futex_calls;
  for (;;) {
    timespec heartbeat{1, 0};
    // Every call carries a new tag (see futex_wait). The controller proves a sleeper idle by
    // finding it in the very same call as before (Controller, "sleeper proofs"): a thread that
    // came back to user space in between, if only for a heartbeat, and ran a signal handler
    // there, re-enters with the same arguments, and only the tag tells the two calls apart.
    // The heartbeat timeout also matters: with a timeout, a handler always ends the call with
    // EINTR; without one the kernel would restart it after the handler with the same registers.
    int r = futex_wait(word, expected, &heartbeat, true, ++calls);
    if (r != ETIMEDOUT) return r;
    if (!owner_alive(c)) die_owner_gone(c);
    if (word->load(std::memory_order_acquire) != expected) return 0;
  }
}

int sleep_on(ProcessContext& c, uint32_t slot, uint32_t expected) {
  auto& word = c.seg->processes[c.proc_index].sleep_word;
  for (;;) {
    // The heartbeat as in wait_word; FUTEX_WAIT_BITSET takes an absolute time. With a timeout, a
    // signal handler always ends the call with EINTR, never a restart with the same registers.
    int64_t until = real_monotonic_ns() + 1000000000LL;
    timespec heartbeat{static_cast<time_t>(until / 1000000000LL), static_cast<long>(until % 1000000000LL)};
    int r = futex_wait_bitset(&word, expected, &heartbeat, abi::sleep_bit(slot));
    if (r != ETIMEDOUT) return r;
    if (!owner_alive(c)) die_owner_gone(c);
    if (word.load(std::memory_order_acquire) != expected) return 0;
  }
}

void die_owner_gone(ProcessContext& c) {
  fprintf(stderr, "vtime: the virtual-time session owner (pid %d) is gone; process %d cannot wait on "
                  "virtual time any more and exits\n", c.seg->header.owner_pid, static_cast<int>(getpid()));
  _exit(kExitAttachFailed);
}

}  // namespace vtime::detail
