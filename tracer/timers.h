// Timers of traced processes: timerfds, POSIX timers and ITIMER_REAL/alarm made as raw system
// calls (a static program's libc, or an inline `syscall`), on the virtual clock.
//
// Each armed timer is a process-owned waiter slot (is_timer, abi::kWakeTracer) that the tracer
// fills in at the call's seccomp stop, like the shim's timers (libvtime/src/api_timer.cpp), and
// fires when the controller reaches it (the slot is Woken, the tracer gets SIGUSR2). The kernel's
// own timer is never armed:
// - timerfd_create on a clock vtime virtualises becomes eventfd2 with the same flags (an eventfd
//   reads exactly like a timerfd: 8 bytes, the expirations since the last read, EAGAIN or a block
//   when there are none). The tracer takes its own descriptor of that file (pidfd_getfd) at the
//   call's exit, and fires the timer by adding the expirations to the eventfd's count, which wakes
//   readers, poll and epoll as the kernel's timer would. timerfd_settime/gettime on it are
//   answered by the tracer (the descriptor is recognised with kcmp, whatever number the program
//   holds it under).
// - timer_create runs as it is (the kernel's id, its sigevent); the first timer_settime of a
//   timer on a virtualised clock reads the timer's clock and notification from /proc/PID/timers.
//   Firing queues the timer's signal with SI_TIMER, its id and value (rt_sigqueueinfo, or
//   rt_tgsigqueueinfo for SIGEV_THREAD_ID; glibc's SIGEV_THREAD is the latter to its helper
//   thread). While that signal is still pending, further expirations count as overruns instead.
// - setitimer(ITIMER_REAL), getitimer(ITIMER_REAL) and alarm are answered by the tracer; firing
//   sends SIGALRM to the process (kill: si_code SI_USER where the kernel says SI_KERNEL).
// Limits (docs/tracer.md): a timerfd's TFD_TIMER_CANCEL_ON_SET is accepted but a clock set does
// not cancel its read; a timerfd stops firing once the process that created it exits (a child
// that inherited it sees no more expirations); the si_overrun of a delivered POSIX timer signal
// counts the periods one clock jump covered, and timer_getoverrun adds those that expired while
// it was pending.
#pragma once

#include <vtime/abi.h>

#include <sys/time.h>
#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <unordered_map>

namespace vtime::tracer {

class Timers {
 public:
  explicit Timers(abi::Segment& seg) : seg_(seg) {}
  ~Timers();
  Timers(const Timers&) = delete;
  Timers& operator=(const Timers&) = delete;

  enum class Action {
    kPass,        // not ours: the call runs as it is
    kDone,        // answered: the call is skipped and returns *result
    kFollowExit,  // rewritten (timerfd_create): follow the thread to the call's exit, then created()
  };
  // At a seccomp stop of thread `tid` of process `pid`: one of the timer calls, or kPass.
  Action on_call(pid_t tid, pid_t pid, user_regs_struct& r, long* result);
  // Whether `tid` is inside a rewritten timerfd_create; created() takes its result at the exit.
  bool creating(pid_t tid) const { return creating_.count(tid) != 0; }
  void created(pid_t tid, pid_t pid, long result);

  // Waiter slot `slot` (kWakeTracer) is Woken: fires it if it is one of these timers (true).
  bool fire(uint32_t slot);

  // The process executed a new program (its POSIX timers are gone) or exited (all of its timers).
  void on_exec(pid_t pid);
  void on_exit(pid_t pid);
  void forget_thread(pid_t tid);

 private:
  enum class Kind { kTimerfd, kPosix, kItimer };
  struct Timer {
    Kind kind = Kind::kPosix;
    pid_t pid = 0;             // the owner (a timerfd's creator)
    int id = 0;                // the kernel's timer id, or the timerfd's number in `pid`
    clockid_t clock = CLOCK_MONOTONIC;
    int64_t interval_ns = 0;
    int own_fd = -1;           // timerfd: the tracer's descriptor of the eventfd
    // POSIX timers: notification (SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD_ID to `notify_tid`).
    int notify = 0;
    int signo = 0;
    pid_t notify_tid = 0;
    uint64_t value = 0;        // sigev_value
    int overrun = 0;           // what timer_getoverrun answers
  };

  // A timer's slot, claimed for `pid`/`tid` with `reason`; kNoSlot when the table is full.
  uint32_t claim(pid_t pid, pid_t tid, uint32_t reason);
  void release(uint32_t slot);
  // Whether waiter slot `slot` is still this timer's: the controller frees every slot of a
  // process it finds dead (a pid reused by then would be another process).
  bool owns(uint32_t slot, const Timer& t) const;
  void drop_stale();
  // The timer behind descriptor `fd` of `pid`, or nullptr.
  Timer* timerfd(pid_t pid, int fd, uint32_t* slot);
  // The POSIX timer `id` of `pid` on a virtualised clock; the first use reads /proc/PID/timers.
  Timer* posix(pid_t tid, pid_t pid, int id, uint32_t* slot);
  Timer* itimer(pid_t tid, pid_t pid, bool create, uint32_t* slot);
  // timer_settime/timerfd_settime: arms or disarms, `old` (if not 0) gets the previous value.
  long settime(pid_t pid, Timer& t, uint32_t slot, bool absolute, uint64_t spec, uint64_t old);
  long gettime(pid_t pid, const Timer& t, uint32_t slot, uint64_t out);
  // setitimer(ITIMER_REAL) and alarm: *old gets the previous value.
  long set_itimer(pid_t tid, pid_t pid, const itimerval& v, itimerval* old);
  // Whether the timerfd's file is still open in its owner (under any number).
  bool still_open(Timer& t);
  void deliver(Timer& t, uint64_t count);

  abi::Segment& seg_;
  std::unordered_map<uint32_t, Timer> timers_;      // by waiter slot
  std::unordered_map<pid_t, clockid_t> creating_;  // threads inside a rewritten timerfd_create
};

}  // namespace vtime::tracer
