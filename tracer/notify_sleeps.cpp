// Notified sleeps: the tracer's part (abi::kTracerNotify, docs/tracer.md "Notified sleeps").
//
// A traced image's clock_nanosleep on a virtual clock goes to the controller through a seccomp
// listener (SECCOMP_RET_USER_NOTIF): the thread waits in the kernel until the controller answers
// at the deadline, with no ptrace stop and no tracer at all. The tracer installs that filter at
// the image's exec stop and hands its listener over, and it is there when a signal ends such a
// wait in the kernel: the notification is then gone and the call returns -ERESTARTSYS, which the
// tracer turns into what nanosleep gives.
#include "tracer.h"

#include "inferior.h"

#include <vtime/internal/context.h>
#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/trace_request.h>

#include <vtime/log.h>

#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <cerrno>
#include <cstring>

namespace vtime::tracer {
namespace {

constexpr long kErestartsys = 512, kErestartnohand = 514;

// A notified sleep of thread `tid` still pending (its slot Waiting, Woken or Waking): the slot's
// index, or -1.
int notify_slot_of(const abi::Segment& seg, pid_t tid) {
  for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
    const auto& s = seg.waiters[i];
    const uint32_t st = s.state.load(std::memory_order_acquire);
    if ((st == abi::kWaiting || st == abi::kWoken || st == abi::kWaking) && s.tid.load(std::memory_order_relaxed) == tid &&
        s.wake_kind.load(std::memory_order_relaxed) == abi::kWakeTracer &&
        (s.tracer_flags.load(std::memory_order_relaxed) & abi::kTracerNotify) != 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The slot of thread `tid`'s notified epoll wait whose events the controller took (or is taking)
// for it (abi::kTracerAnswered), or -1.
int answered_slot_of(const abi::Segment& seg, pid_t tid) {
  for (uint32_t i = 0, n = detail::waiter_limit(seg); i < n; ++i) {
    const auto& s = seg.waiters[i];
    if (s.state.load(std::memory_order_acquire) == abi::kClaimed && s.tid.load(std::memory_order_relaxed) == tid &&
        (s.tracer_flags.load(std::memory_order_acquire) & (abi::kTracerAnswering | abi::kTracerAnswered)) != 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

void Tracer::reap_listeners() {
  for (uint32_t i = 0; i < abi::kNotifyListeners; ++i) {
    auto& l = seg_.header.notify_listeners[i];
    const uint32_t st = l.state.load(std::memory_order_acquire);
    if (listener_fds_[i] >= 0 && (st == abi::kListenerAdopted || st == abi::kListenerClosed)) {
      close(listener_fds_[i]);
      listener_fds_[i] = -1;
    }
    if (st == abi::kListenerClosed) l.state.store(abi::kListenerFree, std::memory_order_release);
  }
}

void Tracer::add_notify_filter(pid_t pid, uint64_t syscall_insn, int* held, bool go) {
  const auto& h = seg_.header;
  if (h.notify_sleeps.load(std::memory_order_acquire) == 3 && !notify_missing_said_) {
    notify_missing_said_ = true;
    std::string why;
    detail::notify_sleeps_supported(&why);
    fprintf(stderr, "vtime: %s: the sleeps of static and Go programs go through the tracer, a few times slower "
                    "(docs/tracer.md \"Notified sleeps\")\n", why.c_str());
  }
  if (h.notify_sleeps.load(std::memory_order_acquire) != 1 || h.serial.load(std::memory_order_acquire) != 0) return;
  reap_listeners();
  // An entry first: a filter whose listener nobody serves would make every sleep fail.
  int entry = -1;
  for (uint32_t i = 0; i < abi::kNotifyListeners && entry < 0; ++i) {
    uint32_t free_state = abi::kListenerFree;
    if (seg_.header.notify_listeners[i].state.compare_exchange_strong(free_state, abi::kListenerReserved,
                                                                      std::memory_order_acq_rel)) {
      entry = static_cast<int>(i);
    }
  }
  if (entry < 0) return;  // all in use: this image's sleeps stay the tracer's
  auto& l = seg_.header.notify_listeners[entry];
  auto give_back = [&] { l.state.store(abi::kListenerFree, std::memory_order_release); };
  // The program, then its sock_fprog, below the part of the stack the vDSO patch used (the
  // program has not run yet).
  user_regs_struct regs{};
  if (!get_regs(pid, regs)) return give_back();
  uint16_t len = 0;
  const sock_filter* filter = detail::notify_filter(&len, go);
  const uint64_t prog_at = (regs.rsp - 8192) & ~uint64_t{15};
  const uint64_t filter_at = prog_at + 16;
  struct {
    uint16_t len;
    uint16_t pad[3];
    uint64_t filter;
  } prog{len, {0, 0, 0}, filter_at};
  static_assert(sizeof prog == sizeof(sock_fprog));
  if (!write_mem(pid, filter_at, filter, len * sizeof(sock_filter)) || !write_mem(pid, prog_at, &prog, sizeof prog)) {
    return give_back();
  }
  // EBUSY: a filter below it has a listener already (an earlier image of this process or its
  // ancestors got ours: its sleeps reach the controller through that one).
  auto fd = remote_syscall(pid, syscall_insn, held, SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                           SECCOMP_FILTER_FLAG_NEW_LISTENER, static_cast<long>(prog_at));
  if (!fd || *fd < 0) return give_back();
  int mine = -1;
  if (int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); pidfd >= 0) {
    mine = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, static_cast<int>(*fd), 0));
    close(pidfd);
  }
  remote_syscall(pid, syscall_insn, held, SYS_close, *fd);
  if (mine < 0) {
    // The filter stays, with no listener left: the kernel fails its calls with ENOSYS.
    fprintf(stderr, "vtime: pid %d: cannot take its sleep listener (%s); its clock_nanosleep calls will fail\n",
            static_cast<int>(pid), strerror(errno));
    return give_back();
  }
  ioctl(mine, detail::kNotifSetFlags, detail::kNotifSyncWakeUp);
  listener_fds_[entry] = mine;
  l.tracer_fd.store(mine, std::memory_order_relaxed);
  l.pid.store(pid, std::memory_order_relaxed);
  l.state.store(abi::kListenerHeld, std::memory_order_release);
  VTIME_LOGF("tracer", LogLevel::kDebug, "pid %d: sleeps go to the controller (listener %d)", static_cast<int>(pid), entry);
}

bool Tracer::note_signal_in_notify_sleep(pid_t tid) {
  Thread& t = thread(tid);
  if (t.notify_follow) return true;  // another signal before its next call: still followed
  user_regs_struct r{};
  if (!get_regs(tid, r) || static_cast<long>(r.rax) != -kErestartsys) return false;
  const long nr = static_cast<long>(r.orig_rax);
  if (nr == SYS_epoll_pwait || nr == SYS_epoll_wait) {
    // A Go poller's notified epoll wait (the kernel's own returns -EINTR). Its slot is ended
    // first, so that the controller's watcher can take no events for it from here on. If the
    // watcher has claimed it already (the kernel dropped its answer, which the signal beat), the
    // call returns the events it took: they are in the thread's array, and gone from the epoll
    // set. The other order lost them when the watcher claimed the slot between the two looks:
    // the call returned EINTR, and the edge of an edge-triggered descriptor (libzmq's ZMQ_FD in
    // Go's poller) would never come again (found by reading; never seen to happen).
    bool ended = false;
    if (const int i = notify_slot_of(seg_, tid); i >= 0) {
      ended = end_slot(seg_.waiters[i], seg_.waiters[i].seq.load(std::memory_order_acquire));
    }
    if (const int i = ended ? -1 : answered_slot_of(seg_, tid); i >= 0) {
      auto& s = seg_.waiters[i];
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while ((s.tracer_flags.load(std::memory_order_acquire) & abi::kTracerAnswering) != 0 &&
             std::chrono::steady_clock::now() < give_up) {
        sched_yield();  // the controller's watcher, a few instructions from done
      }
      if ((s.tracer_flags.fetch_and(~abi::kTracerAnswered, std::memory_order_acq_rel) & abi::kTracerAnswered) != 0) {
        r.rax = static_cast<unsigned long long>(s.deadline.load(std::memory_order_relaxed));
        set_regs(tid, r);
        detail::notify_activity(seg_);  // the controller frees the slot
        return false;
      }
    }
    // Else EINTR, as epoll gives after any signal, and the wait is over.
    r.rax = static_cast<unsigned long long>(-EINTR);
    set_regs(tid, r);
    return false;
  }
  // Only a notified sleep leaves clock_nanosleep with -ERESTARTSYS (the kernel's own sleep says
  // -ERESTART_RESTARTBLOCK or -ERESTARTNOHAND; the tracer rewrites the ones it stops).
  if (nr != SYS_clock_nanosleep) return false;
  // nanosleep's own result after a signal: EINTR if a handler runs (whatever SA_RESTART says),
  // a restart if none does. -ERESTARTSYS would restart it after an SA_RESTART handler too.
  r.rax = static_cast<unsigned long long>(-kErestartnohand);
  set_regs(tid, r);
  // Its slot, unless the controller had not taken the notification yet: then no time passed since
  // the call (the controller takes every notification before it moves the clock).
  const int i = notify_slot_of(seg_, tid);
  t.notify_slot = i < 0 ? detail::kNoSlot : static_cast<uint32_t>(i);
  t.notify_seq = i < 0 ? 0 : seg_.waiters[i].seq.load(std::memory_order_acquire);
  if ((r.rsi & TIMER_ABSTIME) == 0 && r.r10 != 0) {
    // What is left, where a relative sleep writes it, as the kernel does before it returns.
    // At most what was asked for: a slot the controller freed meanwhile (its answer raced the
    // signal, or the wait was gone when it registered it) has no deadline of this sleep any more.
    timespec rem{};
    if (!read_mem(t.pid, r.rdx, &rem, sizeof rem)) rem = timespec{};
    if (i >= 0) {
      const auto& s = seg_.waiters[i];
      const int64_t deadline = s.deadline.load(std::memory_order_acquire);
      const uint32_t st = s.state.load(std::memory_order_acquire);
      const int64_t asked = static_cast<int64_t>(rem.tv_sec) * 1000000000 + rem.tv_nsec;
      if (s.seq.load(std::memory_order_acquire) == t.notify_seq &&
          (st == abi::kWaiting || st == abi::kWoken || st == abi::kWaking)) {
        const int64_t left =
            std::min(asked, std::max<int64_t>(0, deadline - Session::read_clock(seg_.header.clock).ns()));
        rem = timespec{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
      }
    }
    write_mem(t.pid, r.r10, &rem, sizeof rem);
  }
  const uint64_t call[6] = {r.rip, r.rsp, r.rdi, r.rsi, r.rdx, r.r10};
  std::copy(std::begin(call), std::end(call), t.notify_call);
  return true;
}

void Tracer::follow_notify_sleep(Thread& t, const __ptrace_syscall_info& info) {
  t.notify_follow = false;
  const bool again = info.op == PTRACE_SYSCALL_INFO_ENTRY && static_cast<long>(info.entry.nr) == SYS_clock_nanosleep &&
                     info.instruction_pointer == t.notify_call[0] && info.stack_pointer == t.notify_call[1] &&
                     std::equal(info.entry.args, info.entry.args + 4, t.notify_call + 2);
  // Restarted: the controller takes the coming notification as this sleep's, deadline kept.
  if (!again && t.notify_slot != detail::kNoSlot) end_slot(seg_.waiters[t.notify_slot], t.notify_seq);
}

void Tracer::end_notify_sleeps_of(pid_t pid) {
  for (uint32_t i = 0, n = detail::waiter_limit(seg_); i < n; ++i) {
    auto& s = seg_.waiters[i];
    if (s.pid.load(std::memory_order_relaxed) != pid || s.wake_kind.load(std::memory_order_relaxed) != abi::kWakeTracer ||
        (s.tracer_flags.load(std::memory_order_relaxed) & abi::kTracerNotify) == 0) {
      continue;
    }
    end_slot(s, s.seq.load(std::memory_order_acquire));
  }
}

}  // namespace vtime::tracer
