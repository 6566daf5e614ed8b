// The serial gate: one runnable process at a time (abi::Header::serial; docs/design.md
// "Serialised processes").
//
// Processes of a tree run concurrently at one virtual instant: what one of them finds when it
// looks at its sockets depends on how far the others got in real time (kube-scheduler reading
// the answer to its own request before or after a watch event the API server sent meanwhile).
// With the gate, a traced thread whose timed wait ends while another process has the tree does
// not return to its program: at the call's exit (every timed wait is followed to its exit while
// the gate is on) the tracer keeps the result and makes the thread run a futex wait on
// serial_word instead, in the header page its process maps. Asleep there, it counts as idle;
// at the next idle point the controller hands the tree to the held process whose turn comes
// first (start order, Controller's turn_of) and wakes the word; the tracer then gives the thread
// its call's result back. So every process reads what the others sent only once they have all
// stopped, in an order no race decides.
#include "tracer.h"

#include "inferior.h"

#include <vtime/internal/serial_gate.h>
#include <vtime/internal/waits.h>

#include <vtime/log.h>

#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace vtime::tracer {

// The tree is the process's (serial_active) and, when the controller named one of its threads
// (serial_thread, at a hand-over), that thread's: the threads of a Go process released together
// raced for its one processor (which thread takes in ready descriptors, runs the due timers, or
// retakes the processor), and with it the order of its goroutines. A held thread is released
// only on its own turn, never by an advance (serial_thread 0), whose due waits run.
bool Tracer::may_run(pid_t pid, pid_t tid, bool release) const {
  auto& h = seg_.header;
  if (h.serial.load(std::memory_order_acquire) == 0) return true;
  if (h.serial_active.load(std::memory_order_acquire) == pid) {
    pid_t turn = h.serial_thread.load(std::memory_order_acquire);
    return turn == tid || (turn == 0 && !release);
  }
  auto it = processes_.find(pid);
  return it == processes_.end() || it->second.header_page == 0;  // nowhere to hold it
}

bool Tracer::thread_turns() const {
  return seg_.header.serial.load(std::memory_order_acquire) == abi::kSerialThreads;
}

void Tracer::leave_wait(pid_t tid, Thread& t, const user_regs_struct& r, bool release) {
  if (may_run(t.pid, tid, release)) {
    resume(tid);
    return;
  }
  hold(tid, t, r);
}

void Tracer::hold(pid_t tid, Thread& t, const user_regs_struct& r) {
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: holding (call %lld returned %lld)", static_cast<int>(tid),
             static_cast<long long>(r.orig_rax), static_cast<long long>(r.rax));
  t.held = true;
  t.held_regs = r;
  publish_held();
  put_to_sleep(tid, t);
}

uint64_t Tracer::serial_word_in(pid_t pid) {
  return processes_[pid].header_page + offsetof(abi::Header, serial_word);
}

// The syscall instruction the call returned from runs a futex wait on serial_word: at the exit
// of a system call the thread's rip is just past its 2-byte `syscall`.
void Tracer::put_to_sleep(pid_t tid, Thread& t) {
  user_regs_struct r = t.held_regs;
  r.rip -= 2;
  r.rax = SYS_futex;
  r.orig_rax = static_cast<unsigned long long>(-1);
  r.rdi = serial_word_in(t.pid);
  r.rsi = FUTEX_WAIT;  // shared: the controller wakes it through its own mapping
  r.rdx = seg_.header.serial_word.load(std::memory_order_acquire);
  r.r10 = 0;
  r.r8 = 0;
  r.r9 = 0;
  if (!set_regs(tid, r)) return;  // died meanwhile
  detail::notify_activity(seg_);
  ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
}

void Tracer::on_held_stop(pid_t tid, Thread& t, bool exit) {
  // Only the exit of the injected wait decides. A signal handler that runs meanwhile (the
  // kernel saved the futex's registers in its frame, so it sleeps again after rt_sigreturn)
  // makes calls of its own: they run as they are.
  user_regs_struct r{};
  uint64_t word = serial_word_in(t.pid);
  if (!exit || !get_regs(tid, r) || r.orig_rax != SYS_futex || r.rdi != word) {
    ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
    return;
  }
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: held, woken (rax %lld, pid %d, word at %llx)", static_cast<int>(tid),
             static_cast<long long>(r.rax), static_cast<int>(t.pid), static_cast<unsigned long long>(word));
  long rax = static_cast<long>(r.rax);
  if (rax < 0 && rax != -EAGAIN && rax != -EINTR && !interrupted_result(rax)) {
    // The word cannot be waited on there (never seen; it would spin): this process is not held.
    VTIME_LOGF("tracer", LogLevel::kWarn, "pid %d: the serial gate cannot hold it (futex error %ld)", static_cast<int>(t.pid), -rax);
    processes_[t.pid].header_page = 0;
  } else if (!may_run(t.pid, tid, true)) {
    put_to_sleep(tid, t);  // woken for another process's turn, or by a signal
    return;
  }
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: released", static_cast<int>(tid));
  t.held = false;
  publish_held();
  int sig = 0;  // a signal that came during the top-up, delivered as the thread goes on
  top_up(tid, t, &sig);
  if (t.reexec) {
    t.held_regs.rip -= 2;  // a paid charge: its write runs now (Thread::reexec)
    t.reexec = false;
  }
  if (!set_regs(tid, t.held_regs)) return;
  detail::notify_activity(seg_);
  resume(tid, sig);
}

// A descriptor that is ready when a thread adds it to an epoll set (or changes its events) wakes
// the threads waiting on that set at once, in the kernel (ep_insert, ep_modify). The woken thread
// takes its events when it runs, some real-time instant later, while the thread that added the
// descriptor goes on: if that one removes the descriptor meanwhile (Go opens a /proc/sys file in
// net.Listen, registers it with its poller, where such a file is always ready, reads and closes
// it), the woken wait finds nothing and sleeps on, else it returns that one event; two runs of
// kube-scheduler parted there (docs/k8s.md). So the thread that added it waits at its call's exit
// until every woken poller of its process has taken its events (stopped at its exit, or asleep
// again): what they return is then what the descriptor was at the epoll_ctl. The wake-up was
// made inside the call: a woken thread's state reads 'R' from then on until it stops.
void Tracer::settle_pollers(pid_t tid, const Thread& t) {
  for (auto& [other, o] : threads_) {
    if (other == tid || o.pid != t.pid || o.held) continue;
    const bool timed_epoll = o.in_wait && (o.call.nr == SYS_epoll_wait || o.call.nr == SYS_epoll_pwait ||
                                           o.call.nr == SYS_epoll_pwait2);
    if (!timed_epoll && !(o.untimed_follow && o.untimed_epoll)) continue;
    // Bounded: a thread that stays runnable for that long is not one such wake-up (logged).
    const int64_t until = real_monotonic_ns() + 100'000'000;
    char state = proc_.thread_state(t.pid, other);
    while (state == 'R' && real_monotonic_ns() < until) {
      sched_yield();
      state = proc_.thread_state(t.pid, other);
    }
    VTIME_LOGF("tracer", state == 'R' ? LogLevel::kInfo : LogLevel::kDebug, "tid %d: epoll_ctl, poller %d %s",
               static_cast<int>(tid), static_cast<int>(other), state == 'R' ? "still running after 100 ms" : "settled");
  }
}

// An epoll wait's result was taken when the thread woke, at some real-time instant while the
// process that woke it (another one had the tree) was still running: which descriptors it holds
// depends on how far that process got by then (two sockets written one after the other: one
// event or both). Run once more without blocking at the release, every process that had its
// turn before has written everything: what the program gets no longer depends on real time.
// The events already taken stay first (edge-triggered ones would not be reported again).
void Tracer::top_up(pid_t tid, Thread& t, int* sig) {
  user_regs_struct& h = t.held_regs;
  const long nr = static_cast<long>(h.orig_rax);
  const long n = static_cast<long>(h.rax);
  const long max = static_cast<int>(h.rdx);
  if ((nr != SYS_epoll_wait && nr != SYS_epoll_pwait && nr != SYS_epoll_pwait2) || n < 0 || n >= max) return;
  // The call's own syscall instruction, no timeout (only what is ready now), the thread's mask.
  const uint64_t rest = h.rsi + static_cast<uint64_t>(n) * sizeof(epoll_event);
  auto m = remote_syscall(tid, h.rip - 2, sig, SYS_epoll_pwait, static_cast<long>(h.rdi), static_cast<long>(rest), max - n, 0,
                          0, 8);
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: topped up %ld events with %ld", static_cast<int>(tid), n, m ? *m : -1L);
  if (m && *m > 0) h.rax = merge_events(t.pid, h.rsi, static_cast<size_t>(n), static_cast<size_t>(*m));
}

// The program's n + m events, merged as the shim merges its own (merge_epoll_events).
size_t Tracer::merge_events(pid_t pid, uint64_t addr, size_t n, size_t m) {
  std::vector<epoll_event> ev(n + m);
  if (!read_mem(pid, addr, ev.data(), ev.size() * sizeof(epoll_event))) return n + m;
  size_t kept = detail::merge_epoll_events(ev.data(), n, m);
  if (kept == n + m) return kept;
  return write_mem(pid, addr, ev.data(), kept * sizeof(epoll_event)) ? kept : n + m;
}

// Only the tracer writes the list, only while a thread is stopped for it: an idle look of the
// controller (no thread stopped) reads a settled one.
void Tracer::publish_held() {
  struct Held {
    pid_t pid;
    uint32_t rank;
    pid_t tid;
    auto operator<=>(const Held&) const = default;
  };
  std::vector<Held> held;
  for (auto& [tid, t] : threads_) {
    if (t.held) held.push_back({t.pid, t.rank, tid});
  }
  std::sort(held.begin(), held.end());
  auto& h = seg_.header;
  // More held threads than entries (never seen: a handful at a time): the rest are named at a
  // later publication, once the first ones ran.
  for (uint32_t i = 0; i < abi::kSerialHeld; ++i) {
    bool in = i < held.size();
    h.serial_held_tid[i].store(in ? held[i].tid : 0, std::memory_order_release);
    h.serial_held[i].store(in ? held[i].pid : 0, std::memory_order_release);
  }
}

}  // namespace vtime::tracer
