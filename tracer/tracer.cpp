// The tracer's event loop (see tracer.h).
#include "tracer.h"

#include "clock_set.h"
#include "determinism.h"
#include "go_constant.h"
#include "go_scavenger.h"

#include "inferior.h"
#include "vdso_patch.h"

#include <vtime/internal/context.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/proc_reader.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/trace_request.h>
#include <vtime/internal/waits.h>

#include <vtime/log.h>

#include <elf.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace vtime::tracer {
namespace {

constexpr long kErestartnointr = 513;
constexpr long kOptions = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                          PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;

uint64_t tag_of(uint64_t seq) { return abi::kTaggedWaitMark | seq; }

// How long the loop keeps looking for work after some before it sleeps (see run()).
constexpr int64_t kSpinNs = 20000;
// How long (real time) a new thread's first stop waits for its parent's clone event: the event
// normally follows within microseconds.
constexpr int64_t kFirstStopWaitNs = 200 * 1000 * 1000;

std::string comm_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

}  // namespace

Tracer::Tracer(Session& session, std::string segment_path)
    : session_(session), seg_(session.segment()), segment_path_(std::move(segment_path)), timers_(seg_) {
  std::fill(std::begin(listener_fds_), std::end(listener_fds_), -1);
}

Tracer::Thread& Tracer::thread(pid_t tid) {
  auto it = threads_.find(tid);
  if (it != threads_.end()) return it->second;
  Thread t;
  t.pid = thread_group(tid);
  if (t.pid == 0) t.pid = tid;
  return threads_.emplace(tid, t).first->second;
}

void Tracer::resume(pid_t tid, int sig) {
  // A thread the serial gate holds stays followed call by call until it is given back its result.
  // So does a thread a signal stopped in a direct sleep, until its next call.
  // A preemption signal kept back (defer_preemption) is sent again once the thread's wait is over
  // and it goes on: at its end if the tracer follows it there, else (a direct sleep the
  // controller woke) at the thread's next call, which it may interrupt.
  auto it = threads_.find(tid);
  if (it != threads_.end() && it->second.deferred_signal != 0) send_deferred_signal(tid, it->second);
  int request = it != threads_.end() && (it->second.held || it->second.signal_follow || it->second.notify_follow)
                    ? PTRACE_SYSCALL
                    : PTRACE_CONT;
  ptrace(static_cast<__ptrace_request>(request), tid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
}

int Tracer::run() {
  // A SIGTERM (PR_SET_PDEATHSIG), SIGINT or SIGHUP: true when vtime is gone, and then so is the
  // tree. The death signal comes when the *thread* that started us exits: while vtime dies its
  // other threads may live on for a moment, and getppid() still names vtime; when only that
  // thread ended (or a terminal signalled the whole process group) vtime lives on, and so do
  // we: it ends us by exiting. A return after the first signal left the tree without its last
  // guard (tests/reliability/faults.py, kill_vtime).
  auto owner_gone = [&] {
    for (int i = 0; i < 1000 && getppid() == seg_.header.owner_pid; ++i) usleep(1000);
    if (getppid() == seg_.header.owner_pid) return false;
    end_orphaned_tree();
    return true;
  };
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGUSR2, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  auto& h = seg_.header;
  h.tracer_awake.store(1, std::memory_order_seq_cst);
  h.tracer_pid.store(getpid(), std::memory_order_release);
  detail::futex_wake(reinterpret_cast<std::atomic<uint32_t>*>(&h.tracer_pid));
  for (;;) {
    serve_requests();
    int status = 0;
    pid_t w;
    bool any = false;
    while ((w = next_event(&status)) > 0) {
      on_stop(w, status);
      any = true;
    }
    interrupt_due();
    release_late_first_stops();
    if (getppid() != h.owner_pid) {  // the owner is gone (its death also sends us SIGTERM)
      end_orphaned_tree();
      return 0;
    }
    // A stop or a deadline usually follows the last one within microseconds (the thread we just
    // resumed blocks again, the controller advances to its deadline): look again for a while,
    // giving the cpu to whoever wants it, before sleeping. Being woken from the halt an idle vcpu
    // takes costs tens of microseconds on this kind of virtual machine, several times per wait.
    if (any || spin_until_ns_ > real_monotonic_ns()) {
      if (any) spin_until_ns_ = real_monotonic_ns() + kSpinNs;
      siginfo_t info;
      timespec zero{0, 0};
      int sig = sigtimedwait(&set, &info, &zero);
      if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && owner_gone()) return 0;
      if (sig < 0) sched_yield();
      continue;
    }
    // Asleep from here: the controller signals due waits again (abi::Header::tracer_awake). A
    // deadline it reached before it could see that is found by this last look.
    h.tracer_awake.store(0, std::memory_order_seq_cst);
    if (interrupt_due()) {
      h.tracer_awake.store(1, std::memory_order_seq_cst);
      spin_until_ns_ = real_monotonic_ns() + kSpinNs;
      continue;
    }
    siginfo_t info;
    // A first stop waiting for its clone event has a real-time limit (release_late_first_stops).
    timespec limit{0, 10 * 1000 * 1000};
    int sig = waiting_first_stops_.empty() ? sigwaitinfo(&set, &info) : sigtimedwait(&set, &info, &limit);
    h.tracer_awake.store(1, std::memory_order_seq_cst);
    if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && owner_gone()) return 0;
    spin_until_ns_ = real_monotonic_ns() + kSpinNs;
  }
}

// The next stop or exit of a traced thread (waitpid's pid, 0 when there is none). An exit is
// looked at first without taking it (WNOWAIT): taking it is when the kernel detaches the zombie
// and then wakes its parent, and tracer_reaps says so around it (abi::Header).
pid_t Tracer::next_event(int* status) {
  siginfo_t si{};
  if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) != 0 || si.si_pid == 0) return 0;
  const bool exit = si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED;
  auto& reaps = seg_.header.tracer_reaps;
  if (exit) reaps.fetch_add(1, std::memory_order_seq_cst);
  pid_t w = waitpid(si.si_pid, status, __WALL | WNOHANG);
  if (exit) reaps.fetch_add(1, std::memory_order_seq_cst);
  return w;
}

void Tracer::serve_requests() {
  auto& h = seg_.header;
  for (auto& r : h.trace_requests) {
    if (r.state.load(std::memory_order_acquire) != 2) continue;
    pid_t tid = r.tid.load(std::memory_order_relaxed);
    if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(kOptions)) == 0) {
      thread(tid);
      h.traced.fetch_add(1, std::memory_order_acq_rel);
      VTIME_LOGF("tracer", LogLevel::kDebug, "attached tid %d", static_cast<int>(tid));
      r.state.store(3, std::memory_order_release);
    } else {
      r.error.store(errno, std::memory_order_relaxed);
      r.state.store(4, std::memory_order_release);
    }
    detail::futex_wake(&r.state);
  }
}

// vtime died (killed, or crashed): nothing will advance the clock again, and no one reaps or
// ends the tree. Processes waiting in virtual time notice at their next heartbeat (within a
// second) and exit, but one blocked in a call vtime does not control (pause(), a read on a
// socket) would live on forever: end every registered process now. Traced ones also die as
// this process exits (PTRACE_O_EXITKILL). A slot is trusted only while its process is the
// one that registered (same start time), so a recycled pid is never hit.
void Tracer::end_orphaned_tree() {
  int killed = 0;
  for (auto& p : seg_.processes) {
    if (p.state.load(std::memory_order_acquire) != abi::kProcessLive) continue;
    pid_t pid = p.pid.load(std::memory_order_relaxed);
    uint64_t started = 0;
    char st = detail::ProcReader::process_state(pid, &started);
    if (pid <= 1 || st == 0 || st == 'Z' || st == 'X') continue;
    uint64_t want = p.start_time.load(std::memory_order_relaxed);
    if (want != 0 && started != want) continue;
    if (kill(pid, SIGKILL) == 0) ++killed;
  }
  if (killed) {
    fprintf(stderr, "vtime-tracer: vtime (pid %d) is gone: ended the %d process%s of its tree still running\n",
            static_cast<int>(seg_.header.owner_pid), killed, killed == 1 ? "" : "es");
  }
}

void Tracer::free_slot_of(pid_t tid, const Thread& t) {
  if (t.slot < 0) return;
  auto& s = seg_.waiters[t.slot];
  // Only while the slot is still this thread's: the controller may have reclaimed it already.
  if (s.tid.load(std::memory_order_acquire) == tid) {
    detail::free_slot(s);
    detail::notify_activity(seg_);
  }
}

void Tracer::forget(pid_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return;
  free_slot_of(tid, it->second);
  pid_t pid = it->second.pid;
  bool held = it->second.held;
  threads_.erase(it);
  proc_.forget_thread(tid);
  if (held) publish_held();
  timers_.forget_thread(tid);
  if (pid == tid) {
    processes_.erase(pid);
    timers_.on_exit(pid);
  }
}

void Tracer::on_stop(pid_t tid, int status) {
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    forget(tid);
    return;
  }
  if (!WIFSTOPPED(status)) return;
  int sig = WSTOPSIG(status);
  int event = status >> 16;
  bool first_stop = false;
  {
    Thread& t = thread(tid);
    first_stop = !t.seen;
    t.seen = true;
  }
  switch (event) {
    case PTRACE_EVENT_SECCOMP:
      on_call(tid);
      return;
    case PTRACE_EVENT_EXEC:
      on_exec(tid);
      return;
    case PTRACE_EVENT_CLONE:
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK: {
      unsigned long child = 0;
      ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &child);
      if (child != 0) {
        Thread& c = thread(static_cast<pid_t>(child));
        const pid_t parent_pid = thread(tid).pid;
        Process& parent = processes_[parent_pid];  // the same image until it executes
        if (event == PTRACE_EVENT_CLONE) {
          c.rank = ++parent.threads_made;
          c.ranked = true;
          if (c.first_stop_waits) {
            c.first_stop_waits = false;
            on_new_thread(static_cast<pid_t>(child));
          }
        } else {
          c.forked = true;
          c.vforked = event == PTRACE_EVENT_VFORK;
          if (c.first_stop_waits) {
            c.first_stop_waits = false;
            on_new_thread(static_cast<pid_t>(child));
          }
          seg_.header.traced.fetch_add(1, std::memory_order_acq_rel);
          Process& p = processes_[c.pid];
          // The child's own stops race with this one: it may have executed already (a vfork
          // child usually has), and then it has an image of its own.
          if (!p.executed) {
            p.go = parent.go;
            p.clock_code = parent.clock_code;
            p.header_page = parent.header_page;
            p.forever = parent.forever;
            p.tsc_reads = parent.tsc_reads;
            p.tick_sites = parent.tick_sites;
            p.libraries_patched = parent.libraries_patched;
            p.random_seed = parent.random_seed;
            p.random_drawn = parent.random_drawn;
          }
          register_child(parent_pid, c.pid);
        }
      }
      resume(tid);
      return;
    }
    case PTRACE_EVENT_STOP:
      if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
        ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);  // a group stop: stay stopped, as without us
        return;
      }
      if (first_stop && thread_turns()) {
        Thread& t = thread(tid);
        pid_t parent = 0;
        if (t.pid != tid ? !t.ranked
                         : !t.forked && detail::ProcReader::process_state(tid, nullptr, &parent) != 0 &&
                               processes_.count(parent) != 0) {  // a traced parent's event is to come
          t.first_stop_waits = true;  // its parent's clone event is still to come (Thread::ranked)
          waiting_first_stops_.emplace_back(tid, real_monotonic_ns() + kFirstStopWaitNs);
          VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: first stop before its %s event", static_cast<int>(tid), t.pid != tid ? "clone" : "fork");
          return;
        }
        on_new_thread(tid);
        return;
      }
      thread(tid);
      on_interrupted(tid);
      resume(tid);
      return;
    case 0:
      if (sig == (SIGTRAP | 0x80)) {
        on_syscall_stop(tid);  // entry or exit of a call followed to its end (exit_tracked)
        return;
      }
      if ((sig == SIGSEGV || sig == SIGILL) && on_tsc_fault(tid, sig)) {
        resume(tid);  // a time-stamp counter read, answered: no signal
        return;
      }
      VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: signal %d", static_cast<int>(tid), sig);
      if (defer_preemption(tid, sig)) {
        // The call restarts: a direct sleep by itself (restart_syscall), another followed to its end.
        if (thread(tid).call.direct) {
          resume(tid);
        } else {
          ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
        }
        return;
      }
      if (note_signal_in_sleep(tid)) {
        thread(tid).signal_follow = true;
      } else if (note_signal_in_notify_sleep(tid)) {
        thread(tid).notify_follow = true;
      }
      resume(tid, sig);  // a signal for the program: delivered as it is
      return;
    default:
      resume(tid);
      return;
  }
}

void Tracer::release_late_first_stops() {
  if (waiting_first_stops_.empty()) return;
  const int64_t now = real_monotonic_ns();
  auto& w = waiting_first_stops_;
  for (size_t i = 0; i < w.size();) {
    auto it = threads_.find(w[i].first);
    if (it == threads_.end() || !it->second.first_stop_waits) {
      w[i] = w.back();
      w.pop_back();
      continue;
    }
    if (now < w[i].second) {
      ++i;
      continue;
    }
    pid_t tid = w[i].first;
    w[i] = w.back();
    w.pop_back();
    // Never seen in a test; if it happens, the turn order of this thread may vary between runs.
    fprintf(stderr, "vtime-tracer: tid %d (%s): no clone event %d ms after its first stop; it runs without its rank\n",
            static_cast<int>(tid), comm_of(tid).c_str(), static_cast<int>(kFirstStopWaitNs / 1000000));
    it->second.first_stop_waits = false;
    on_new_thread(tid);
  }
}

void Tracer::on_new_thread(pid_t tid) {
  // A new thread runs beside the one that made it: held until its turn (a vfork child is not:
  // Thread::vforked).
  Thread& t = thread(tid);
  user_regs_struct r{};
  if (!may_run(t.pid, tid, true) && !t.vforked && get_regs(tid, r)) {
    hold(tid, t, r);
    return;
  }
  on_interrupted(tid);
  resume(tid);
}

// A traced process forked `child`: its process slot gets the child's rank and lineage, as the
// shim's fork wrapper gives them, so that its turn at one instant does not follow its pid
// (Controller's turn_of). A parent with no slot (a static root) gets one first. A parent under
// the shim too (a cgo program) announces the child itself right after the fork, which replaces
// what is written here; its fork count then moves by two a fork, the same in every run.
void Tracer::register_child(pid_t parent, pid_t child) {
  uint32_t pi = detail::try_claim_process_slot(seg_, parent, 0, 0, detail::ChildId{});
  if (pi == abi::kNoProcess) return;  // the table is full: the controller says so to the shim's processes
  detail::try_claim_process_slot(seg_, child, parent, 0, detail::next_child_of(seg_.processes[pi]));
}

bool Tracer::passthrough(pid_t pid, uint64_t rip) {
  Process& p = processes_[pid];
  if (!p.maps_read) {
    p.maps_read = true;
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    bool shim = false;
    std::vector<std::pair<uint64_t, uint64_t>> code;
    while (std::getline(maps, line)) {
      std::istringstream in(line);
      std::string range, perms, off, dev, inode, path;
      in >> range >> perms >> off >> dev >> inode >> path;
      if (path.find("libvtime-shim") != std::string::npos) shim = true;
      bool ours = path.find("libvtime-shim") != std::string::npos || path.find("/libc.so") != std::string::npos ||
                  path.find("/ld-linux") != std::string::npos;
      if (!ours || perms.size() < 3 || perms[2] != 'x') continue;
      size_t dash = range.find('-');
      code.emplace_back(std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16));
    }
    if (shim) p.passthrough = std::move(code);
  }
  for (auto& [lo, hi] : p.passthrough) {
    if (rip >= lo && rip < hi) return true;
  }
  return false;
}

namespace {
// The environment process `pid` was executed with (NAME=VALUE strings).
std::vector<std::string> environ_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::vector<std::string> vars;
  for (std::string v; std::getline(in, v, '\0');) vars.push_back(std::move(v));
  return vars;
}
}  // namespace

void Tracer::patch_go_constants(pid_t pid, const std::string& exe) {
  const std::string prefix = std::string(kGoConstantEnv) + "=";
  for (const std::string& v : environ_of(pid)) {
    if (v.compare(0, prefix.size(), prefix) != 0) continue;
    std::string why;
    auto constants = parse_go_constants(v.substr(prefix.size()), why);
    if (!constants) {
      fprintf(stderr, "vtime: pid %d (%s): %s ignored: %s\n", static_cast<int>(pid), comm_of(pid).c_str(), kGoConstantEnv,
              why.c_str());
      return;
    }
    for (const GoConstant& c : *constants) {
      if (patch_go_constant(pid, exe, c, why)) {
        VTIME_LOGF("tracer", LogLevel::kInfo, "pid %d (%s): %s loads %u instead of %u", static_cast<int>(pid),
                   comm_of(pid).c_str(), c.function.c_str(), c.to, c.from);
      } else {
        fprintf(stderr, "vtime: pid %d (%s): %s left as it is: %s\n", static_cast<int>(pid), comm_of(pid).c_str(),
                c.function.c_str(), why.c_str());
      }
    }
    return;
  }
}

void Tracer::read_charges(pid_t pid, Process& p) {
  p.charges_read = true;
  std::vector<std::string> vars = environ_of(pid);
  std::vector<const char*> envp;
  for (auto& v : vars) envp.push_back(v.c_str());
  envp.push_back(nullptr);
  p.charges = detail::charged_calls(envp.data());
  p.write_match = p.charges.write_match != nullptr ? p.charges.write_match : "";
  p.charges.write_match = nullptr;  // pointed into `vars`
  if (p.charges.any()) {
    VTIME_LOGF("tracer", LogLevel::kInfo,
               "pid %d (%s): each write to descriptor %d%s%s%s costs %lld ns, each sync %lld ns", static_cast<int>(pid),
               comm_of(pid).c_str(), p.charges.write_fd, p.write_match.empty() ? "" : " containing '",
               p.write_match.c_str(), p.write_match.empty() ? "" : "'", static_cast<long long>(p.charges.write_ns),
               static_cast<long long>(p.charges.sync_ns));
  }
}

void Tracer::on_call(pid_t tid) {
  Thread& t = thread(tid);
  user_regs_struct r{};
  if (!get_regs(tid, r)) return;  // died meanwhile
  if (t.held) {  // the injected wait of a held thread (thread turns stop every futex wait)
    ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
    return;
  }
  if (t.deferred_signal != 0) send_deferred_signal(tid, t);  // its direct sleep ended meanwhile
  // Clock setting first, wherever the call comes from: no raw call may reach the host's clock.
  if (emulate_clock_set(tid, t.pid, r, seg_)) {
    resume(tid);
    return;
  }
  if (passthrough(t.pid, r.rip)) {
    resume(tid);
    return;
  }
  {
    // Untimed waits the serial gate stops (trace_request.cpp): decided at their exit.
    const long nr = static_cast<long>(r.orig_rax);
    const bool futex_wait = nr == SYS_futex && r.r10 == 0 && ((r.rsi & 0x7f) == FUTEX_WAIT || (r.rsi & 0x7f) == FUTEX_WAIT_BITSET);
    const bool epoll_untimed = (nr == SYS_epoll_wait || nr == SYS_epoll_pwait) && static_cast<int>(r.r10) < 0;
    const bool direct_again = nr == SYS_futex && t.call.direct;
    if (nr == SYS_epoll_ctl) {  // adds or changes a descriptor (trace_request.cpp, kEpollCtl)
      t.ctl_follow = thread_turns();
      if (t.ctl_follow) {
        ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
      } else {
        resume(tid);
      }
      return;
    }
    if ((futex_wait || epoll_untimed || direct_again) && t.in_wait && in_call(r, t.call, tag_of(t.seq))) {
      // A rewritten timed wait, restarted after a signal: still the same wait.
      if (t.follow) {
        ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
      } else {
        resume(tid);
      }
      return;
    }
    if (futex_wait || epoll_untimed) {
      const uint32_t gate = seg_.header.serial.load(std::memory_order_acquire);
      if (futex_wait ? gate == abi::kSerialThreads : gate != 0) {
        t.untimed_follow = true;
        t.untimed_epoll = epoll_untimed;
        // With thread turns an untimed epoll wait that returns during an advance's step was
        // woken by the thread the step released (or from outside the tree): it waits for its
        // turn too (see the timed waits' exit below).
        t.untimed_release = futex_wait || gate == abi::kSerialThreads;
        ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
      } else {
        resume(tid);
      }
      return;
    }
  }
  long result = 0;
  switch (timers_.on_call(tid, t.pid, r, &result)) {
    case Timers::Action::kDone:
      r.orig_rax = static_cast<unsigned long long>(-1);  // the kernel skips the call ...
      r.rax = static_cast<unsigned long long>(result);   // ... which returns this
      set_regs(tid, r);
      resume(tid);
      return;
    case Timers::Action::kFollowExit:
      if (set_regs(tid, r)) ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
      return;
    case Timers::Action::kPass:
      break;
  }
  if (static_cast<long>(r.orig_rax) == SYS_getrandom) {
    Process& p = processes_[t.pid];
    if (p.random_seed != 0) answer_getrandom(t.pid, tid, r, p.random_seed, &p.random_drawn);
    resume(tid);
    return;
  }
  bool uncontrolled = false;
  std::optional<TimedCall> call;
  if (const long nr = static_cast<long>(r.orig_rax); nr == SYS_write || nr == SYS_fsync || nr == SYS_fdatasync) {
    // Only processes with charged calls stop at these (trace_request.h, charged_calls).
    Process& p = processes_[t.pid];
    if (!p.charges_read) read_charges(t.pid, p);
    int64_t cost = nr == SYS_write ? (static_cast<int>(r.rdi) == p.charges.write_fd ? p.charges.write_ns : 0)
                                   : p.charges.sync_ns;
    if (nr == SYS_write && cost > 0 && !t.charge_paid && !p.write_match.empty()) {
      // Only the lines that stand for a step (VTIME_WRITE_MATCH): a more verbose log costs no more.
      char head[detail::kWriteMatchBytes];
      const size_t n = std::min<size_t>(r.rdx, sizeof head);
      if (n == 0 || !read_mem(t.pid, r.rsi, head, n) || !detail::write_matches(p.write_match.c_str(), head, n)) cost = 0;
    }
    if (t.charge_paid || cost <= 0) {
      t.charge_paid = false;  // the call whose charge was paid, or one that costs nothing
      resume(tid);
      return;
    }
    // A wait in the kernel, as the program sees it (a system call): Go's sysmon may hand the
    // processor to other goroutines meanwhile, as it does for any call that lasts.
    call = charge(seg_, cost, abi::kReasonSleep);
    t.charge_regs = r;
  } else {
    call = decode(t.pid, r, seg_, &uncontrolled);
  }
  if (!call) {
    if (uncontrolled) {
      Process& p = processes_[t.pid];
      if (!p.warned_uncontrolled) {
        p.warned_uncontrolled = true;
        VTIME_LOGF("tracer", LogLevel::kInfo, "pid %d (%s): system call %lld keeps its real timeout", static_cast<int>(t.pid),
                   comm_of(t.pid).c_str(), static_cast<long long>(r.orig_rax));
      }
    }
    resume(tid);
    return;
  }
  if (t.slot < 0 || seg_.waiters[t.slot].tid.load(std::memory_order_acquire) != tid) {
    uint32_t i = detail::claim_waiter_slot(seg_, t.pid, tid, abi::kNoProcess, false);
    t.slot = i == detail::kNoSlot ? -1 : static_cast<int32_t>(i);
  }
  if (t.slot < 0) {
    fprintf(stderr, "vtime: waiter table full (%u slots)\n", abi::kWaiterSlots);
    resume(tid);
    return;
  }
  auto& s = seg_.waiters[t.slot];
  detail::settle_waking(s);  // the previous wait's wake-up, if the controller is still at it
  unsigned long long r_orig_nr = r.orig_rax;  // before the rewrite
  const unsigned long long r_rdi = r.rdi, r_rsp = r.rsp;
  Process& proc = processes_[t.pid];
  // A sleep waits on its slot's word where the process maps the segment, unless the serial gate
  // follows waits to their exit (abi::kTracerDirect).
  const uint64_t seq = seg_.header.next_seq.fetch_add(1, std::memory_order_relaxed);
  if (proc.header_page != 0 && seg_.header.serial.load(std::memory_order_acquire) == 0 && !call->charged) {
    const uint64_t offset = static_cast<uint64_t>(reinterpret_cast<const char*>(&s.word) - reinterpret_cast<const char*>(&seg_));
    make_direct(*call, proc.header_page + offset, s.word.load(std::memory_order_acquire), abi::direct_bit(seq), proc.forever);
  }
  t.seq = seq;
  t.call = *call;
  t.in_wait = true;
  t.signal_follow = false;
  // The tagged registers before the slot is Waiting (see the controller's
  // drop_ended_tracer_waits): the previous wait's slot, if still Waiting, is taken back first.
  s.state.store(abi::kClaimed, std::memory_order_release);
  s.deadline.store(call->deadline_ns, std::memory_order_relaxed);
  s.early_ns.store(static_cast<uint32_t>(call->early_ns), std::memory_order_relaxed);
  s.reason.store(call->reason, std::memory_order_relaxed);
  s.wake_kind.store(abi::kWakeTracer, std::memory_order_relaxed);
  s.seq.store(t.seq, std::memory_order_relaxed);
  // An absolute CLOCK_REALTIME deadline moves with a later set of the clock (settime.h).
  detail::mark_realtime(s, call->realtime_abs, call->realtime_shift);
  // In a Go program, timed futex waits are the runtime's own (sysmon's park, spinning threads),
  // and so are the sleeps of its usleep (sysmon's 20 us to 10 ms), which passes its timespec at
  // the stack pointer (`nanosleep(SP, 0)` on amd64, in Debian's Go 1.19 and the releases around
  // it); the program's timers wait in epoll_pwait (the network poller). A nanosleep the program
  // makes itself (syscall.Nanosleep, x/sys/unix) has its timespec elsewhere: the program's wait.
  long orig_nr = static_cast<long>(r_orig_nr);
  // The clock code's own sleeps pay the CPU-time model's debt: the program's time, not the runtime's.
  bool paying = proc.clock_code != 0 && r.rip >= proc.clock_code && r.rip < proc.clock_code + 4096;
  bool housekeeping = proc.go && !paying && ((orig_nr == SYS_nanosleep && r_rdi == r_rsp) || orig_nr == SYS_futex);
  if (paying) s.reason.store(abi::kReasonCpu, std::memory_order_relaxed);
  s.tracer_flags.store((call->exit_tracked ? abi::kTracerExitTracked : 0) | (housekeeping ? abi::kTracerHousekeeping : 0) |
                           (proc.go ? abi::kTracerAnyThread : 0) | (call->direct ? abi::kTracerDirect : 0),
                       std::memory_order_relaxed);
  rewrite(r, *call, tag_of(t.seq));
  if (!set_regs(tid, r)) return;  // died meanwhile
  s.state.store(abi::kWaiting, std::memory_order_release);
  // A set made meanwhile by another process of the tree (through the shim) moved no slot of ours.
  detail::settle_realtime(seg_, s);
  detail::notify_activity(seg_);
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: call %lld waits until %lld (wait %llu, slot %d)", static_cast<int>(tid),
             static_cast<long long>(call->nr), static_cast<long long>(call->deadline_ns),
             static_cast<unsigned long long>(t.seq), t.slot);
  // The serial gate decides at the call's exit whether the thread may go on (serial_gate.cpp).
  // So does a charge, whose write is made at the exit.
  t.follow = call->exit_tracked || call->charged || seg_.header.serial.load(std::memory_order_acquire) != 0;
  if (t.follow) {
    ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);  // stop again when the call returns
  } else {
    resume(tid);
  }
}

void Tracer::end_wait(Thread& t) {
  t.in_wait = false;
  if (t.slot >= 0) end_slot(seg_.waiters[t.slot], t.seq);
}

bool Tracer::end_slot(abi::WaiterSlot& s, uint64_t seq) {
  detail::settle_waking(s);  // the controller at it (abi::kWaking): its outcome, then ours
  if (s.seq.load(std::memory_order_acquire) != seq) return false;
  for (uint32_t st : {abi::kWaiting, abi::kWoken}) {
    uint32_t expected = st;
    if (s.state.compare_exchange_strong(expected, abi::kClaimed, std::memory_order_acq_rel)) {
      s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
      detail::notify_activity(seg_);
      return true;
    }
  }
  return false;
}

void Tracer::on_syscall_stop(pid_t tid) {
  Thread& t = thread(tid);
  __ptrace_syscall_info info{};
  if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info) <= 0) {
    resume(tid);
    return;
  }
  if (timers_.creating(tid)) {
    if (info.op == PTRACE_SYSCALL_INFO_EXIT) timers_.created(tid, t.pid, static_cast<long>(info.exit.rval));
    resume(tid);
    return;
  }
  if (t.held) {
    on_held_stop(tid, t, info.op == PTRACE_SYSCALL_INFO_EXIT);
    return;
  }
  if (t.ctl_follow) {
    if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
      t.ctl_follow = false;
      settle_pollers(tid, t);
      resume(tid);
    } else {
      ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
    }
    return;
  }
  if (t.notify_follow) {
    follow_notify_sleep(t, info);  // the first call after a signal stopped it in a notified sleep
    resume(tid);
    return;
  }
  if (t.untimed_follow) {
    user_regs_struct r{};
    if (info.op != PTRACE_SYSCALL_INFO_EXIT || !get_regs(tid, r) || interrupted_result(static_cast<long>(r.rax))) {
      // Restarted after a signal, or interrupted by one: it restarts (stopping again) or returns EINTR.
      if (info.op == PTRACE_SYSCALL_INFO_EXIT) t.untimed_follow = false;
      ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);
      return;
    }
    t.untimed_follow = false;
    leave_wait(tid, t, r, t.untimed_release);
    return;
  }
  if (t.signal_follow) {
    // The first call after a signal stopped the thread in a direct sleep: restart_syscall if no
    // handler ran (the sleep goes on), anything else if one did (the sleep returned EINTR).
    t.signal_follow = false;
    if (!t.in_wait || info.op != PTRACE_SYSCALL_INFO_ENTRY || static_cast<long>(info.entry.nr) != SYS_restart_syscall) {
      end_wait(t);
    }
    resume(tid);
    return;
  }
  if (!t.in_wait || !t.follow) {
    resume(tid);
    return;
  }
  if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
    if (static_cast<long>(info.entry.nr) == t.call.nr) {
      ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);  // the call restarted after a signal: still waiting
    } else {
      end_wait(t);  // it returned (EINTR to a handler) and the thread went on to another call
      resume(tid);
    }
    return;
  }
  user_regs_struct r{};
  if (!get_regs(tid, r)) return;
  if (interrupted_result(static_cast<long>(r.rax))) {
    if (t.interrupt_sent && t.interrupt_seq == t.seq) {
      if (t.call.charged) {
        // The charge is paid: the thread goes back to the write's own system call instruction
        // (2 bytes back), which stops once more and then runs (on_call, charge_paid). Held by the
        // serial gate meanwhile, it keeps the registers of a returned call (the gate's wait is
        // made at the instruction just run) and goes back at its release (Thread::reexec).
        r = t.charge_regs;
        r.rax = r.orig_rax;
        user_regs_struct again = r;
        again.rip -= 2;
        set_regs(tid, again);
        t.charge_paid = true;
        t.reexec = true;
        end_wait(t);
        leave_wait(tid, t, r);
        if (!t.held) t.reexec = false;
        return;
      }
      // The deadline: what the timeout gives instead of the interruption.
      write_timeout_effects(t.pid, t.call);
      r.rax = static_cast<unsigned long long>(t.call.timeout_result);
      set_regs(tid, r);
      end_wait(t);
      leave_wait(tid, t, r);
    } else {
      ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr);  // a signal: it restarts or returns EINTR (seen next)
    }
    return;
  }
  // It returned by itself before the deadline: no advance ended it, so another thread woke it
  // (Go's sysmon parked until the next timer, woken by a thread leaving a system call; Go's
  // network poller, woken by a thread back from a charged call that wrote to a descriptor the
  // poller watches or broke its wait for an earlier timer), or something outside the tree did.
  // With thread turns it waits for its turn, as after an untimed wait, instead of running beside
  // the thread that woke it while its process has an advance's step (a race in real time: which
  // of them first took the runtime's processor; two runs of kube-scheduler parted there).
  // (A wait whose deadline the advance reached but whose events came first is the step's own.)
  const bool woken_by_thread = thread_turns() && !(t.interrupt_sent && t.interrupt_seq == t.seq);
  end_wait(t);
  leave_wait(tid, t, r, woken_by_thread);
}

unsigned Tracer::tsc_read_len(Process& p, pid_t pid, pid_t tid, user_regs_struct& r, int sig) {
  if (sig == SIGSEGV) return tsc_insn(pid, tid, r);
  if (p.tick_sites.empty() || !get_regs(tid, r)) return 0;
  const unsigned len = patched_tick_len(p.tick_sites, r.rip);
  // The first read is runtime.cputicks's in schedinit: the dynamic loader has mapped the
  // libraries the program links, and the runtime has not started a second thread yet, so no
  // thread executes the code being changed.
  if (len != 0 && !p.libraries_patched) patch_library_ticks(p, pid);
  return len;
}

void Tracer::patch_library_ticks(Process& p, pid_t pid) {
  p.libraries_patched = true;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", static_cast<int>(pid));
  char exe[4096];
  const ssize_t n = readlink(path, exe, sizeof exe - 1);
  const std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  snprintf(path, sizeof path, "/proc/%d/maps", static_cast<int>(pid));
  std::ifstream maps(path);
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode path"
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int name_at = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &name_at) < 4 || name_at <= 0) continue;
    const std::string file = line.substr(static_cast<size_t>(name_at));
    if (perms[2] != 'x' || file.empty() || file[0] != '/' || file == self || file.find("libvtime-shim") != std::string::npos) continue;
    std::string why;
    std::vector<TickSite> in_file = find_prologue_tick_sites(file, why);
    std::vector<TickSite> here;
    for (const TickSite& s : in_file) {
      if (s.addr >= offset && s.addr + s.len <= offset + (end - start)) here.push_back({start + (s.addr - offset), s.len});
    }
    if (here.empty()) continue;
    if (!patch_tick_sites(pid, here, 0, &p.tick_sites)) {
      fprintf(stderr, "vtime: pid %d (%s): cannot patch the counter reads of %s: they stay real\n", static_cast<int>(pid),
              comm_of(pid).c_str(), file.c_str());
    }
    VTIME_LOGF("tracer", LogLevel::kDebug, "pid %d: %zu counter read(s) of %s patched", static_cast<int>(pid), here.size(), file.c_str());
  }
}

bool Tracer::on_tsc_fault(pid_t tid, int sig) {
  Thread& t = thread(tid);
  user_regs_struct r{};
  Process& p = processes_[t.pid];
  unsigned len = tsc_read_len(p, t.pid, tid, r, sig);
  if (len == 0) return false;  // a real SIGSEGV or SIGILL
  // The injected clock code reads the counter while the clock runs (the real elapsed time);
  // the program's own reads get the virtual clock in ns, plus one per read so that they increase.
  // Both routes give the same values: a run's seeds do not depend on which one the machine allows.
  bool clock_code = p.clock_code != 0 && r.rip >= p.clock_code && r.rip < p.clock_code + 4096;
  uint64_t value = clock_code ? __rdtsc() : static_cast<uint64_t>(Session::read_clock(seg_.header.clock).ns()) + ++p.tsc_reads;
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: counter read at %llx: %llu", static_cast<int>(tid),
             static_cast<unsigned long long>(r.rip), static_cast<unsigned long long>(value));
  return complete_tsc(tid, r, len, value);
}

void Tracer::seed_ticks(pid_t pid, uint64_t syscall_insn, int* held, const std::string& exe) {
  if (!tsc_route_) {
    tsc_route_ = tsc_route();
    VTIME_LOGF("tracer", LogLevel::kDebug, "counter reads of Go programs: %s",
               *tsc_route_ == TscRoute::kTrap ? "the CPU's trap" : "runtime.cputicks patched");
  }
  std::string why;
  if (*tsc_route_ == TscRoute::kTrap) {
    if (trap_tsc(pid, syscall_insn, held)) {
      seg_.header.tsc_trapped_images.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    why = "prctl(PR_SET_TSC) failed";
  } else {
    Process& p = processes_[pid];
    uint64_t entry = 0;
    std::vector<TickSite> sites = find_tick_sites(exe, why, &entry);
    if (!sites.empty()) {
      p.tick_sites.clear();
      if (patch_tick_sites(pid, sites, load_bias(pid, entry), &p.tick_sites)) {
        seg_.header.tsc_patched_images.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      why = "cannot write its code";
    }
    const char* env = getenv("VTIME_GO_TICKS");
    why = std::string(env && strcmp(env, "patch") == 0 ? "VTIME_GO_TICKS=patch"
                                                       : "this machine does not trap the time-stamp counter (prctl "
                                                         "PR_SET_TSC is accepted but ignored)") +
          ", and runtime.cputicks could not be patched: " + why;
  }
  seg_.header.tsc_real_images.fetch_add(1, std::memory_order_relaxed);
  if (!tsc_lost_said_) {
    tsc_lost_said_ = true;
    fprintf(stderr, "vtime: pid %d (%s): its runtime threads' random seeds come from the real time-stamp counter, so "
                    "map iteration order and select choices may differ between runs (%s)\n",
            static_cast<int>(pid), comm_of(pid).c_str(), why.c_str());
  }
}

void Tracer::forget_ended_direct_sleep(Thread& t) {
  if (!t.in_wait || !t.call.direct || t.slot < 0) return;
  const auto& s = seg_.waiters[t.slot];
  const uint32_t st = s.state.load(std::memory_order_acquire);
  if (s.seq.load(std::memory_order_acquire) != t.seq || (st != abi::kWaiting && st != abi::kWoken && st != abi::kWaking)) {
    t.in_wait = false;
  }
}

// Go's sysmon preempts a goroutine it has seen on one processor for 10 ms with SIGURG. Under
// vtime that span is virtual: after an advance, sysmon (running beside the thread its process's
// wait released) could find the processor's last scheduling 2 s old and signal the thread that
// had just taken it, by then in a raw system call, which the signal interrupted: a
// syscall.Nanosleep returned EINTR (natively it cannot, unless the goroutine computed 10 ms first),
// in some runs only (a race in real time; tracer.go_syscall_timers in CI). A goroutine in a
// system call needs no preemption, so the signal waits for the call's end: the call restarts
// (a direct sleep through restart_syscall, by itself; another followed to its exit), and the
// signal is sent again once the thread goes on (resume). Only Go programs' SIGURG, only in a
// rewritten call the signal interrupted.
bool Tracer::defer_preemption(pid_t tid, int sig) {
  if (sig != SIGURG) return false;
  Thread& t = thread(tid);
  if (t.signal_redelivered) {
    t.signal_redelivered = false;  // sent again after its wait: delivered, whatever the thread does now
    return false;
  }
  auto p = processes_.find(t.pid);
  forget_ended_direct_sleep(t);
  if (p == processes_.end() || !p->second.go || !t.in_wait || t.held || t.signal_follow || t.notify_follow) {
    return false;
  }
  user_regs_struct r{};
  if (!get_regs(tid, r) || !in_call(r, t.call, tag_of(t.seq)) || !interrupted_result(static_cast<long>(r.rax))) {
    return false;
  }
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: preemption signal kept back until wait %llu ends", static_cast<int>(tid),
             static_cast<unsigned long long>(t.seq));
  t.deferred_signal = sig;
  if (!t.call.direct) t.follow = true;
  return true;
}

void Tracer::send_deferred_signal(pid_t tid, Thread& t) {
  forget_ended_direct_sleep(t);
  if (t.in_wait || t.held) return;
  syscall(SYS_tgkill, t.pid, tid, t.deferred_signal);
  t.deferred_signal = 0;
  t.signal_redelivered = true;
}

bool Tracer::note_signal_in_sleep(pid_t tid) {
  Thread& t = thread(tid);
  // A thread followed after a signal that meets another one before its next call: still followed.
  if (t.signal_follow) return true;
  forget_ended_direct_sleep(t);
  if (!t.in_wait || (t.call.rem_addr == 0 && !t.call.direct)) return false;
  user_regs_struct r{};
  if (!get_regs(tid, r) || !in_call(r, t.call, tag_of(t.seq)) || !interrupted_result(static_cast<long>(r.rax))) {
    return false;
  }
  // The signal ends the sleep (EINTR with a handler) or restarts it (none): either way what is
  // left is written where nanosleep writes it, as the kernel does before it returns EINTR.
  if (t.call.rem_addr != 0) {
    int64_t left = std::max<int64_t>(0, t.call.deadline_ns - Session::read_clock(seg_.header.clock).ns());
    timespec rem{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    write_mem(t.pid, t.call.rem_addr, &rem, sizeof rem);
  }
  return t.call.direct;
}

void Tracer::on_interrupted(pid_t tid) {
  Thread& t = thread(tid);
  if (!t.interrupt_sent) return;  // a new child's first stop, or an interrupt already handled
  t.interrupt_sent = false;
  user_regs_struct r{};
  if (!get_regs(tid, r)) return;
  forget_ended_direct_sleep(t);
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: interrupted in call %lld (rax %lld), wait %llu in_wait %d",
             static_cast<int>(tid), static_cast<long long>(r.orig_rax), static_cast<long long>(r.rax),
             static_cast<unsigned long long>(t.seq), t.in_wait ? 1 : 0);
  if (t.in_wait && in_call(r, t.call, tag_of(t.seq)) && interrupted_result(static_cast<long>(r.rax))) {
    if (t.interrupt_seq == t.seq) {
      r.rax = static_cast<unsigned long long>(t.call.timeout_result);
      t.in_wait = false;
    } else if (!t.call.direct) {
      // The interrupt was for an earlier wait, which ended before it landed: back into this one.
      r.rax = static_cast<unsigned long long>(-kErestartnointr);
    }
    // (A direct sleep goes back through restart_syscall, as rax already says: executed afresh,
    // its timed futex call would meet the seccomp filter as a new wait of ~35,000 years.)
    set_regs(tid, r);
  }
  if (t.slot >= 0) {
    auto& s = seg_.waiters[t.slot];
    uint32_t woken = abi::kWoken;
    if (s.seq.load(std::memory_order_relaxed) == t.interrupt_seq &&
        s.state.compare_exchange_strong(woken, abi::kClaimed, std::memory_order_acq_rel)) {
      s.deadline.store(abi::kNoDeadline, std::memory_order_relaxed);
      detail::notify_activity(seg_);
    }
  }
}

bool Tracer::interrupt_due() {
  bool acted = false;
  for (uint32_t i = 0, n = detail::waiter_limit(seg_); i < n; ++i) {
    auto& s = seg_.waiters[i];
    // A direct sleep is the controller's to wake, unless it cleared the flag (abi::kTracerDirect;
    // it does so before the slot turns Woken); a notified sleep is the controller's.
    if (s.state.load(std::memory_order_seq_cst) != abi::kWoken ||
        s.wake_kind.load(std::memory_order_relaxed) != abi::kWakeTracer ||
        (s.tracer_flags.load(std::memory_order_seq_cst) & (abi::kTracerDirect | abi::kTracerNotify)) != 0) {
      continue;
    }
    if (timers_.fire(i)) {
      acted = true;
      continue;
    }
    pid_t tid = s.tid.load(std::memory_order_relaxed);
    auto it = threads_.find(tid);
    if (it == threads_.end() || it->second.slot != static_cast<int32_t>(i)) continue;
    Thread& t = it->second;
    uint64_t seq = s.seq.load(std::memory_order_relaxed);
    if (t.interrupt_sent && t.interrupt_seq == seq) continue;
    t.interrupt_sent = true;
    t.interrupt_seq = seq;
    acted = true;
    VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: deadline of wait %llu, interrupting", static_cast<int>(tid),
               static_cast<unsigned long long>(seq));
    if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
      t.interrupt_sent = false;  // gone: its exit is reported next
    }
  }
  return acted;
}

void Tracer::on_exec(pid_t tid) {
  unsigned long former = 0;
  ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &former);
  // The exec ended every other thread of the process, and the waits they were in: a direct
  // sleep's slot would otherwise stay Waiting (the controller leaves those to the tracer), above
  // all the leader's, whose id the executing thread took over (ended below, slot kept). The
  // slots of the threads that are gone are freed.
  auto drop = [&](pid_t gone, Thread& g) {
    end_wait(g);
    free_slot_of(gone, g);
  };
  if (former != 0 && static_cast<pid_t>(former) != tid) {
    // A thread other than the leader executed: it took the leader's id, the others are gone.
    if (auto f = threads_.find(static_cast<pid_t>(former)); f != threads_.end()) drop(f->first, f->second);
    threads_.erase(static_cast<pid_t>(former));
  }
  bool held_gone = false;  // the exec ended a held thread: the list must not name it any more
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (it->second.pid == tid && it->first != tid) {
      held_gone = held_gone || it->second.held;
      drop(it->first, it->second);
      it = threads_.erase(it);
    } else {
      ++it;
    }
  }
  Thread& t = thread(tid);
  // A leader that was held when another thread executed is gone: this entry is the executing
  // thread's now.
  held_gone = held_gone || t.held;
  t.held = false;
  if (held_gone) publish_held();
  t.pid = tid;
  end_wait(t);
  end_notify_sleeps_of(tid);  // the controller's, of the threads the exec ended
  t.notify_follow = false;
  t.deferred_signal = 0;  // the old image's preemption: nothing of it is left to preempt
  t.signal_redelivered = false;
  t.rank = 0;  // the main thread of the new image
  Process& p = processes_[tid] = Process{};
  p.executed = true;
  timers_.on_exec(tid);
  char exe[64];
  snprintf(exe, sizeof exe, "/proc/%d/exe", static_cast<int>(tid));
  p.go = detail::exec_kind(exe) == detail::ExecKind::kGo;
  int held = 0;
  std::string why;
  PatchedImage img;
  if (!patch_vdso(tid, tid, segment_path_, &held, &img, why)) {
    fprintf(stderr, "vtime: pid %d (%s) reads the real clock: %s\n", static_cast<int>(tid), comm_of(tid).c_str(),
            why.c_str());
  } else {
    p.clock_code = img.code_page;
    p.header_page = img.header_page;
    p.forever = img.forever;
    add_notify_filter(tid, img.syscall_insn, &held, p.go);
    if (p.go) {
      // Go's random seeds (determinism.h). Not under --cpu-model real, whose running clock the
      // injected code reads from the counter at every read: a trap each would cost too much, and
      // such a run is not deterministic anyway.
      char path[4096];
      ssize_t n = readlink(exe, path, sizeof path - 1);
      const std::string exe_path(path, n > 0 ? static_cast<size_t>(n) : 0);
      uint64_t seed = random_seed(exe_path);
      seed_random(tid, seed);
      std::string scav_why;
      if (!park_go_scavenger(tid, exe_path, scav_why)) {
        VTIME_LOGF("tracer", LogLevel::kDebug, "pid %d: Go's scavenger left as it is: %s", static_cast<int>(tid),
                   scav_why.c_str());
      }
      patch_go_constants(tid, exe_path);
      if (seg_.header.cpu_model.load(std::memory_order_acquire) != abi::kCpuReal) {
        seed_ticks(tid, img.syscall_insn, &held, exe_path);
        p.random_seed = seed;
      }
    }
  }
  resume(tid, held);
}

}  // namespace vtime::tracer
