// Notified sleeps: the controller's part (see notify_sleeps.h).
#include "notify_sleeps.h"

#include "context.h"
#include "futex.h"
#include "slots.h"
#include "trace_request.h"
#include "waits.h"

#include <vtime/log.h>
#include <vtime/session.h>
#include <vtime/tree_watch.h>

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace vtime::detail {

bool notify_sleeps_supported() {
  // In a child: a filter cannot be taken back. It installs the notify filter with a listener and
  // asks for the synchronous wake-up; its exit status says whether the kernel took both.
  pid_t child = static_cast<pid_t>(raw_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0));
  if (child < 0) return false;
  if (child == 0) {
    raw_syscall6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    uint16_t len = 0;
    const sock_filter* filter = notify_filter(&len);
    sock_fprog prog{len, const_cast<sock_filter*>(filter)};
    long fd = raw_syscall6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                           reinterpret_cast<long>(&prog), 0, 0, 0);
    bool ok = fd >= 0 && raw_syscall6(SYS_ioctl, fd, static_cast<long>(kNotifSetFlags), static_cast<long>(kNotifSyncWakeUp), 0, 0, 0) == 0;
    raw_syscall6(SYS_exit_group, ok ? 0 : 1, 0, 0, 0, 0, 0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

NotifiedSleeps::~NotifiedSleeps() {
  close_mem_files();
  for (const Listener& l : listeners_) close(l.fd);
  if (epoll_ >= 0) close(epoll_);
  if (tracer_pidfd_ >= 0) close(tracer_pidfd_);
}

void NotifiedSleeps::adopt(TreeWatch* watch) {
  auto& h = seg_.header;
  for (uint32_t i = 0; i < abi::kNotifyListeners; ++i) {
    auto& l = h.notify_listeners[i];
    if (l.state.load(std::memory_order_acquire) != abi::kListenerHeld) continue;
    if (tracer_pidfd_ < 0) tracer_pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, h.tracer_pid.load(), 0));
    int fd = tracer_pidfd_ < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, tracer_pidfd_, l.tracer_fd.load(), 0));
    if (fd < 0) {
      // The tracer is gone, and the tree with it (PTRACE_O_EXITKILL).
      VTIME_LOGF("controller", LogLevel::kWarn, "cannot adopt the sleep listener of pid %d: %s", l.pid.load(), strerror(errno));
      continue;
    }
    if (epoll_ < 0) epoll_ = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
    // A controller waiting for the tree to be quiet wakes for a notification too.
    if (watch) watch->wake_on(fd, true);
    listeners_.push_back({fd, i, watch});
    l.state.store(abi::kListenerAdopted, std::memory_order_release);
    VTIME_LOGF("controller", LogLevel::kDebug, "adopted the sleep listener of pid %d", l.pid.load());
  }
}

void NotifiedSleeps::retire(size_t i) {
  Listener l = listeners_[i];
  epoll_ctl(epoll_, EPOLL_CTL_DEL, l.fd, nullptr);
  if (l.watch) l.watch->wake_on(l.fd, false);
  close(l.fd);
  // The tracer closes its copy and frees the entry.
  seg_.header.notify_listeners[l.entry].state.store(abi::kListenerClosed, std::memory_order_release);
  listeners_.erase(listeners_.begin() + static_cast<long>(i));
}

bool NotifiedSleeps::take(TreeWatch* watch) {
  adopt(watch);
  if (listeners_.empty()) return false;
  if (in_flight_ != 0) forget_ended();
  bool changed = false;
  // Bounded: each round takes at least one notification or closes a listener.
  // A listener stays readable while it holds notifications: several threads of a process may
  // sleep at once, and each comes as its own.
  for (int round = 0; round < 256; ++round) {
    epoll_event ev[16];
    int n = epoll_wait(epoll_, ev, 16, 0);
    if (n <= 0) break;
    for (int k = 0; k < n; ++k) {
      const int fd = ev[k].data.fd;
      auto it = std::find_if(listeners_.begin(), listeners_.end(), [&](const Listener& l) { return l.fd == fd; });
      if (it == listeners_.end()) continue;
      if ((ev[k].events & EPOLLIN) != 0) {
        changed = take_one(fd, watch) || changed;
      } else if ((ev[k].events & (EPOLLHUP | EPOLLERR)) != 0) {
        retire(static_cast<size_t>(it - listeners_.begin()));  // no process uses the filter any more
      }
    }
  }
  return changed;
}

int64_t NotifiedSleeps::read_timespec(pid_t pid, pid_t tid, uint64_t addr) {
  timespec ts{};
  bool read = false;
  if (pid != 0) {
    auto it = mem_of_.find(pid);
    if (it == mem_of_.end()) {
      // Bounded: a tree of many short processes must not collect descriptors.
      if (mem_of_.size() >= 64) close_mem_files();
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(pid));
      it = mem_of_.emplace(pid, open(path, O_RDONLY | O_CLOEXEC)).first;
    }
    read = it->second >= 0 && pread(it->second, &ts, sizeof ts, static_cast<off_t>(addr)) == static_cast<ssize_t>(sizeof ts);
    if (!read && it->second >= 0) {
      // The address space it was opened on is gone (an exec: reads return nothing), or the
      // address is bad: the call below says which, and the next sleep opens the file anew.
      close(it->second);
      mem_of_.erase(it);
    }
  }
  if (!read) {
    iovec local{&ts, sizeof ts};
    iovec remote{reinterpret_cast<void*>(addr), sizeof ts};
    if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof ts)) return -1;
  }
  if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return -1;
  if (ts.tv_sec > 9000000000LL) return INT64_MAX / 2;  // centuries are as good as forever
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void NotifiedSleeps::close_mem_files() {
  for (const auto& [pid, fd] : mem_of_) {
    if (fd >= 0) close(fd);
  }
  mem_of_.clear();
}

bool NotifiedSleeps::take_one(int fd, TreeWatch* watch) {
  // No thread of the tree active, and the count's generation: if both hold until the sleep is
  // registered, its thread never left its wait meanwhile (a signal would have woken it).
  std::optional<uint64_t> quiet;
  if (watch) {
    const TreeWatch::Counts c = watch->counts();
    if (c.active == 0) quiet = c.generation;
  }
  if (request_.empty()) {
    seccomp_notif_sizes sizes{};
    syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes);
    request_.assign(std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)), 0);
  }
  std::fill(request_.begin(), request_.end(), 0);
  auto* req = reinterpret_cast<seccomp_notif*>(request_.data());
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) return false;  // gone meanwhile (a signal)
  const pid_t tid = static_cast<pid_t>(req->pid);
  const uint64_t id = req->id;
  const __u64* a = req->data.args;  // clock, flags, request, remainder
  if (req->data.nr != SYS_clock_nanosleep) {
    send(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);  // not a call of the notify filter's
    return false;
  }
  // The same sleep again: the kernel restarted it after a signal that no handler took (or that
  // another thread of its process took): its slot and deadline are kept.
  if (auto it = slot_of_tid_.find(tid); it != slot_of_tid_.end() && sleep_at(it->second) && sleep_at(it->second)->tid == tid) {
    const uint32_t index = it->second;
    Sleep& sl = sleeps_[index];
    auto& s = seg_.waiters[index];
    const uint32_t st = s.state.load(std::memory_order_acquire);
    if (s.tid.load() == tid && s.seq.load() == sl.seq && (st == abi::kWaiting || st == abi::kWoken)) {
      sl.fd = fd;
      sl.id = id;
      sl.pending = true;
      if (st == abi::kWoken) {
        // Its deadline came while the call was on its way back.
        if (answer(index) == Answer::kAnswered) free_if(s, abi::kWoken);
        return true;
      }
      return false;
    }
    if (s.tid.load() == tid && s.seq.load() == sl.seq && st == abi::kClaimed) free_slot(s);  // the tracer ended it
    drop(index);
  }
  const pid_t pid = process_of(tid);
  const int64_t d = read_timespec(pid, tid, a[2]);
  const clockid_t clock = static_cast<clockid_t>(a[0]);
  if (d < 0) {
    send(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);  // the kernel's own EFAULT or EINVAL
    return false;
  }
  const auto& clk = seg_.header.clock;
  const int64_t now = Session::read_clock(clk).ns();
  const int64_t shift = clk.realtime_shift_ns.load(std::memory_order_acquire);
  const bool absolute = (a[1] & TIMER_ABSTIME) != 0;
  const bool realtime = absolute && is_realtime_clock(clock);
  int64_t deadline;
  if (absolute) {
    deadline = d - (realtime ? clk.epoch_ns + shift : clk.mono_origin_ns);
  } else {
    deadline = d >= INT64_MAX / 2 - now ? INT64_MAX / 2 : now + d;
  }
  if (deadline <= now) {
    if (send(fd, id, 0, 0, 0)) ++answered_;  // no time to wait: returns at once, as it would
    return false;
  }
  const uint32_t index = pid == 0 ? kNoSlot : claim_waiter_slot(seg_, pid, tid, abi::kNoProcess, false);
  if (index == kNoSlot) {
    if (pid != 0) fprintf(stderr, "vtime: waiter table full (%u slots)\n", abi::kWaiterSlots);
    send(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
    return false;
  }
  auto& s = seg_.waiters[index];
  s.deadline.store(deadline, std::memory_order_relaxed);
  s.reason.store(abi::kReasonSleep, std::memory_order_relaxed);
  s.wake_kind.store(abi::kWakeTracer, std::memory_order_relaxed);
  const uint64_t seq = seg_.header.next_seq.fetch_add(1, std::memory_order_relaxed);
  s.seq.store(seq, std::memory_order_relaxed);
  mark_realtime(s, realtime, shift);
  s.tracer_flags.store(abi::kTracerNotify, std::memory_order_relaxed);
  s.state.store(abi::kWaiting, std::memory_order_release);
  settle_realtime(seg_, s);  // a set meanwhile (through the shim) moved no slot of this one
  if (sleeps_.size() <= index) sleeps_.resize(index + 1);
  sleeps_[index] = Sleep{fd, id, seq, tid, true, true};
  ++in_flight_;
  slot_of_tid_[tid] = index;
  // Still waiting in the kernel now that the slot is there (the kernel count says so when no
  // thread of the tree ran since before the notification was taken, else the kernel)? Then a signal that ends the wait from
  // here on stops the thread for the tracer after this check (the kernel's lock orders the two),
  // and the tracer finds the slot. If the wait is gone already (a signal), the tracer may have
  // looked before the slot existed: the slot goes, and if the kernel restarts the call it is
  // registered anew, with the same deadline (the clock has not moved: every notification is taken
  // before it does).
  bool still = false;
  if (quiet) {
    const TreeWatch::Counts c = watch->counts();
    still = c.active == 0 && c.generation == *quiet;
  }
  if (!still && ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) {
    free_if(s, abi::kWaiting);
    drop(index);
    return false;
  }
  VTIME_LOGF("controller", LogLevel::kDebug, "tid %d sleeps until %lld (wait %llu, slot %u)", static_cast<int>(tid),
             static_cast<long long>(deadline), static_cast<unsigned long long>(seq), index);
  return true;
}

NotifiedSleeps::Answer NotifiedSleeps::answer(uint32_t index) {
  Sleep* sl = sleep_at(index);
  if (!sl) return Answer::kUnknown;
  if (!sl->pending || !send(sl->fd, sl->id, 0, 0, 0)) {
    sl->pending = false;  // the restarted call is answered when it comes (take_one)
    return Answer::kGone;
  }
  drop(index);
  ++answered_;
  return Answer::kAnswered;
}

void NotifiedSleeps::drop(uint32_t index) {
  sleeps_[index].used = false;
  --in_flight_;
}

void NotifiedSleeps::free_if(abi::WaiterSlot& s, uint32_t from) {
  if (s.state.compare_exchange_strong(from, abi::kClaimed, std::memory_order_acq_rel)) free_slot(s);
}

void NotifiedSleeps::forget_ended() {
  for (uint32_t i = 0; i < sleeps_.size(); ++i) {
    const Sleep& sl = sleeps_[i];
    if (!sl.used) continue;
    auto& s = seg_.waiters[i];
    const uint32_t st = s.state.load(std::memory_order_acquire);
    const bool ours = s.tid.load() == sl.tid && s.seq.load() == sl.seq;
    if (ours && (st == abi::kWaiting || st == abi::kWoken)) continue;
    if (ours && st == abi::kClaimed) free_slot(s);  // the tracer ended it (a handler ran)
    drop(i);
  }
}

void NotifiedSleeps::threads_exited() {
  process_of_.clear();
  // Only the entries of sleeps in flight stay: a thread id may come back in another process.
  for (auto it = slot_of_tid_.begin(); it != slot_of_tid_.end();) {
    const Sleep* sl = sleep_at(it->second);
    it = sl && sl->tid == it->first ? std::next(it) : slot_of_tid_.erase(it);
  }
  close_mem_files();  // a pid may come back as another process
}

bool NotifiedSleeps::send(int fd, uint64_t id, int64_t val, int32_t error, uint32_t flags) {
  seccomp_notif_resp resp{};
  resp.id = id;
  resp.val = val;
  resp.error = error;
  resp.flags = flags;
  return ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0;
}

pid_t NotifiedSleeps::process_of(pid_t tid) {
  if (auto it = process_of_.find(tid); it != process_of_.end()) return it->second;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* t = strstr(buf, "\nTgid:");
  if (!t) return 0;
  pid_t pid = static_cast<pid_t>(strtol(t + 6, nullptr, 10));
  if (pid > 0) process_of_[tid] = pid;
  return pid;
}

}  // namespace vtime::detail
