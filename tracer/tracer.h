// The tracer: the process that brings programs the shim cannot reach (static executables, Go
// programs) under the session's virtual clock. See docs/tracer.md for the design and its limits.
//
// It is started by spawn_in_session (vtime/spawn.h) beside the wrapped tree, as a child of the
// session owner that dies with it, and learns what to trace from the segment's trace requests
// (trace_request.h). A traced thread stops (seccomp, SECCOMP_RET_TRACE) on each timed wait: the
// tracer gives it a waiter slot with the virtual deadline (abi::kWakeTracer) and lets it wait
// without a timeout (timed_call.h); the controller signals the tracer (SIGUSR2) when it reaches
// the deadline, and the tracer interrupts the wait with its timeout's result. Timers armed with
// raw system calls are emulated on the same slots (timers.h). Clock reads never
// stop: the vDSO is patched at every exec (vdso_patch.h). Threads, forks and execs are followed
// (PTRACE_O_TRACECLONE/FORK/VFORK/EXEC); PTRACE_O_EXITKILL kills every traced process if the
// tracer dies, and the tracer dies with the session owner (PR_SET_PDEATHSIG).
#pragma once

#include "determinism.h"
#include "go_ticks.h"
#include "timed_call.h"
#include "timers.h"

#include <vtime/internal/proc_reader.h>
#include <vtime/internal/trace_request.h>
#include <vtime/session.h>

#include <sys/ptrace.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vtime::tracer {

class Tracer {
 public:
  Tracer(Session& session, std::string segment_path);
  // Serves requests, stops and deadlines until the session owner is gone. Returns an exit code.
  int run();

 private:
  struct Thread {
    pid_t pid = 0;           // its process
    int32_t slot = -1;       // its waiter slot, kept between waits
    bool in_wait = false;    // inside a rewritten call (as far as the tracer knows)
    uint64_t seq = 0;        // that call's wait
    TimedCall call;
    bool interrupt_sent = false;
    uint64_t interrupt_seq = 0;  // the wait the interrupt was sent for
    bool follow = false;         // the wait is followed to its exit (exit-tracked, or the serial gate)
    // Held by the serial gate (serial_gate.cpp): asleep in an injected futex wait; `held_regs`
    // are the registers its call returned with, given back when its process may run.
    bool held = false;
    user_regs_struct held_regs{};
    // Its rank among the threads its process made (0: the main thread), which orders the turns
    // of a process's held threads (abi::Header::serial_held_tid).
    uint32_t rank = 0;
    // A new thread's rank comes with its parent's clone event, which the kernel may report after
    // the thread's own first stop: that stop then waits (the thread stays stopped, so the tree is
    // not idle) until the rank is known, or its turn would depend on which stop came first.
    bool ranked = false;
    bool first_stop_waits = false;
    // A new process: its parent's fork event came (`forked`), and said vfork (or clone with
    // CLONE_VFORK: Go's os/exec, glibc's posix_spawn and system). A vfork child is never held for
    // its turn: its parent waits for it, uninterruptibly, until it executes or exits, so holding
    // it until the tree is idle would never end. Its first stop waits for the event like a
    // thread's for its rank.
    bool forked = false;
    bool vforked = false;
    // An untimed wait the serial gate follows to its exit, where it decides whether the thread
    // may go on: an epoll wait (release false) or, with thread turns, a futex wait (true).
    bool untimed_follow = false;
    bool untimed_release = false;
    bool untimed_epoll = false;  // that wait is an epoll wait
    // An epoll_ctl followed to its exit, where the process's pollers it woke settle first
    // (settle_pollers).
    bool ctl_follow = false;
    bool seen = false;  // it has stopped before (a new thread's first stop is held)
    // A signal stopped it inside a direct sleep (timed_call.h): it is followed to its next call,
    // which says whether the sleep restarted (restart_syscall) or ended with EINTR.
    bool signal_follow = false;
    // A charged write (timed_call.h, charge): the registers of the write, executed once the
    // charge is paid; `charge_paid`: the next write stop is that one, which runs.
    user_regs_struct charge_regs{};
    bool charge_paid = false;
    bool reexec = false;  // held with a paid charge: back to the write's instruction at the release
    // A signal stopped it in a notified sleep (notify_sleeps.cpp): followed to its next call, the
    // same one again (the kernel restarts it: at this address, this stack, these arguments) or
    // another (the sleep ended: its slot, of wait `notify_seq`, is ended).
    bool notify_follow = false;
    // Go's preemption signal (SIGURG) that came while the thread waited in a rewritten call:
    // kept back until the wait ends (defer_preemption).
    int deferred_signal = 0;
    bool signal_redelivered = false;  // that signal, sent again: delivered at its next stop
    uint32_t notify_slot = 0;
    uint64_t notify_seq = 0;
    uint64_t notify_call[6] = {};  // instruction and stack pointers, the four arguments
  };
  struct Process {
    bool maps_read = false;
    // Code of the shim and of libc (where the shim's own calls come from): stops there run as
    // they are, the shim already made them virtual.
    std::vector<std::pair<uint64_t, uint64_t>> passthrough;
    bool warned_uncontrolled = false;
    bool go = false;  // a Go program: its sleeps and timed futex waits are housekeeping
    uint64_t clock_code = 0;  // the injected clock code's page (vdso_patch.h), 0 if none
    uint64_t header_page = 0;  // the segment (mapped whole, read-only) in the process, 0 if not mapped
    uint64_t forever = 0;      // PatchedImage::forever, 0 if none
    // The process has executed an image since the tracer met it: what its parent's fork event
    // would copy (it may be reported after the child's exec) belongs to another image.
    bool executed = false;
    uint64_t tsc_reads = 0;  // time-stamp counter reads answered (determinism.h)
    // Counter instructions patched to fault (go_ticks.h; TscRoute::kPatch), at their addresses
    // in the process: runtime.cputicks's, and, from the first of its reads on (the libraries
    // are loaded by then), those at the start of a shared library's functions.
    std::vector<TickSite> tick_sites;
    bool libraries_patched = false;
    uint32_t threads_made = 0;  // threads the process has created (Thread::rank)
    // A Go program's random bytes (determinism.h): its seed, 0 for others; getrandom bytes drawn.
    uint64_t random_seed = 0;
    uint64_t random_drawn = 0;
    // Its charged calls (trace_request.h, charged_calls), read from its environment at the first
    // stop of one.
    bool charges_read = false;
    detail::ChargedCalls charges;  // its write_match pointed into a copy of the environment: see below
    std::string write_match;       // VTIME_WRITE_MATCH (trace_request.h): empty, every write is charged
  };

  pid_t next_event(int* status);
  void serve_requests();
  void on_stop(pid_t tid, int status);
  void on_call(pid_t tid);
  // The process's charged calls, from /proc/PID/environ.
  void read_charges(pid_t pid, Process& p);
  // At a Go image's exec stop: the constants its environment asks to replace (go_constant.h).
  void patch_go_constants(pid_t pid, const std::string& exe);
  void on_exec(pid_t tid);
  void on_interrupted(pid_t tid);
  // A new thread's first stop, once its rank is known: held until its turn, or on its way.
  void on_new_thread(pid_t tid);
  // First stops still waiting for their clone event past their real-time limit: taken anyway,
  // with a warning (a clone event that never comes must not stall the tree).
  void release_late_first_stops();
  // A signal stopped `tid`: inside a rewritten relative sleep, fills in the sleep's `rem`. True
  // when the thread is inside a direct sleep (it is then followed to its next call).
  bool note_signal_in_sleep(pid_t tid);
  // A preemption signal of Go's runtime for a thread waiting in a rewritten call: kept back (true)
  // until the wait ends, instead of interrupting it.
  bool defer_preemption(pid_t tid, int sig);
  // That signal, sent again once the thread's wait is over (not held): at the next stop it comes.
  void send_deferred_signal(pid_t tid, Thread& t);
  // The controller ends a direct sleep it woke without telling the tracer (its slot leaves
  // Waiting/Woken, or is another wait's): the thread is then no longer in it. Called before
  // registers are matched against the sleep (in_call), whose restarted form names no call.
  void forget_ended_direct_sleep(Thread& t);
  // Notified sleeps (abi::kTracerNotify, notify_sleeps.cpp). At an image's exec stop: adds the
  // notify filter (a Go image's: its poller's timed epoll waits) and publishes its listener for
  // the controller (nothing under the serial gate, or without the session's notify_sleeps).
  void add_notify_filter(pid_t pid, uint64_t syscall_insn, int* held, bool go);
  // Closes the tracer's copies of listeners the controller adopted or closed.
  void reap_listeners();
  // A signal stopped `tid`: if it ended a notified sleep in the kernel, the call returns EINTR to
  // a handler or restarts without one (as nanosleep does), `rem` gets the time left, and true:
  // the thread is followed to its next call.
  bool note_signal_in_notify_sleep(pid_t tid);
  // That next call (entry `info`): the sleep again, or the sleep's end.
  void follow_notify_sleep(Thread& t, const __ptrace_syscall_info& info);
  // Ends the notified sleeps of the threads of process `pid` (its exec ended them).
  void end_notify_sleeps_of(pid_t pid);
  // A SIGSEGV: if the thread read the time-stamp counter (trapped, determinism.h), answers it.
  // A SIGILL: if it executed a patched read of runtime.cputicks (go_ticks.h), the same.
  bool on_tsc_fault(pid_t tid, int sig);
  // At a Go image's exec stop: makes its counter reads come to the tracer, by the route this
  // machine allows (TscRoute); says once per session when neither works for an image.
  void seed_ticks(pid_t pid, uint64_t syscall_insn, int* held, const std::string& exe);
  // The counter read thread `tid` (registers `r`) stopped on: its length, 0 if none.
  unsigned tsc_read_len(Process& p, pid_t pid, pid_t tid, user_regs_struct& r, int sig);
  // Patches the counter reads at the start of the functions of the shared libraries process
  // `pid` has mapped (not the executable, whose cputicks is done, nor vtime's shim).
  void patch_library_ticks(Process& p, pid_t pid);
  void on_syscall_stop(pid_t tid);
  // Interrupts the calls whose deadline the controller reached and fires due timers; true when
  // it did anything.
  bool interrupt_due();
  void forget(pid_t tid);
  // Frees the waiter slot of thread `tid` (state `t`), if the slot is still that thread's.
  void free_slot_of(pid_t tid, const Thread& t);
  // The serial gate (abi::Header::serial, serial_gate.cpp). At the exit of a wait (its registers
  // `r`, result set): holds the thread if another process has the tree, else resumes it.
  void leave_wait(pid_t tid, Thread& t, const user_regs_struct& r, bool release = false);
  void hold(pid_t tid, Thread& t, const user_regs_struct& r);
  bool thread_turns() const;
  // A stop of a held thread: gives it back its call's result once its process may run, or puts
  // it back to sleep.
  void on_held_stop(pid_t tid, Thread& t, bool exit);
  // Whether thread `tid` of process `pid` may go on: a wait that ends (`release` false), or a
  // held thread woken on serial_word (`release` true; only on its own turn).
  bool may_run(pid_t pid, pid_t tid, bool release) const;
  void put_to_sleep(pid_t tid, Thread& t);
  // At the exit of thread `tid`'s epoll_ctl (thread turns): waits until every other thread of
  // its process that waits in epoll and was woken meanwhile (a descriptor added ready wakes them
  // in the kernel) has taken its events, before the thread goes on and may take them away.
  void settle_pollers(pid_t tid, const Thread& t);
  // At the release of a held epoll wait: a second, non-blocking epoll_pwait into the rest of the
  // program's buffer, whose events join the held ones in t.held_regs (a signal stopping the
  // thread meanwhile lands in *sig).
  void top_up(pid_t tid, Thread& t, int* sig);
  size_t merge_events(pid_t pid, uint64_t addr, size_t n, size_t m);
  // Where process `pid` sees Header::serial_word (in its mapping of the header page).
  uint64_t serial_word_in(pid_t pid);
  void publish_held();
  // A traced process forked `child`: registers it with its rank and lineage (tracer.cpp).
  void register_child(pid_t parent, pid_t child);
  // vtime is gone: kills every process of the tree (see tracer.cpp).
  void end_orphaned_tree();
  // The thread's wait is over (its slot back to Claimed).
  void end_wait(Thread& t);
  // Wait `seq` on slot `s` is over (Claimed; a notified sleep's slot is then the controller's to
  // free), once the controller is not at it (abi::kWaking); nothing if the slot moved on.
  // Whether this call ended it.
  bool end_slot(abi::WaiterSlot& s, uint64_t seq);
  Thread& thread(pid_t tid);
  bool passthrough(pid_t pid, uint64_t rip);
  void resume(pid_t tid, int sig = 0);

  Session& session_;
  abi::Segment& seg_;
  std::string segment_path_;
  std::unordered_map<pid_t, Thread> threads_;
  detail::ProcReader proc_;  // threads' state letters (settle_pollers); a thread's fds go at its forget
  std::unordered_map<pid_t, Process> processes_;
  Timers timers_;
  int64_t spin_until_ns_ = 0;  // real time until which run() polls instead of sleeping
  // New threads whose first stop waits for their clone event (Thread::first_stop_waits), with
  // the real time at which they are let go without it.
  std::vector<std::pair<pid_t, int64_t>> waiting_first_stops_;
  // How counter reads reach the tracer on this machine, decided at the first Go image.
  std::optional<TscRoute> tsc_route_;
  bool tsc_lost_said_ = false;
  bool notify_missing_said_ = false;  // the notice that notified sleeps cannot be had here was printed  // the notice that an image's counter reads stay real was printed
  // The tracer's copy of each published listener (abi::Header::notify_listeners), -1 none.
  int listener_fds_[abi::kNotifyListeners];
};

}  // namespace vtime::tracer
