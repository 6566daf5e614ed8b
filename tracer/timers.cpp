// Timers of traced processes (see timers.h).
#include "timers.h"

#include "inferior.h"

#include <vtime/internal/context.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/timer_slots.h>

#include <vtime/log.h>
#include <vtime/session.h>

#include <dirent.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace vtime::tracer {
namespace {

// Clocks a timerfd or a POSIX timer can have that vtime virtualises; the *_ALARM ones (which
// need CAP_WAKE_ALARM) and CPU-time clocks stay the kernel's.
bool timer_clock(clockid_t clk) { return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC || clk == CLOCK_BOOTTIME; }

bool same_file(pid_t pid, int fd, int own_fd) {
  return syscall(SYS_kcmp, pid, getpid(), KCMP_FILE, fd, own_fd) == 0;
}

// Takes the expirations an eventfd holds without ever blocking (another thread of the program
// may read it meanwhile).
void drop_expirations(int fd) {
  uint64_t drop;
  iovec v{&drop, sizeof drop};
  if (preadv2(fd, &v, 1, -1, RWF_NOWAIT) >= 0 || errno != EOPNOTSUPP) return;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 0) == 1) {
    ssize_t r = read(fd, &drop, sizeof drop);
    (void)r;
  }
}

// Whether signal `sig` is pending in the set named `field` ("ShdPnd", "SigPnd") of a status file.
bool signal_pending(const std::string& status_path, const char* field, int sig) {
  std::ifstream f(status_path);
  std::string line;
  std::string key = std::string(field) + ":";
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    uint64_t set = strtoull(line.c_str() + key.size(), nullptr, 16);
    return sig >= 1 && sig <= 64 && (set >> (sig - 1)) & 1;
  }
  return false;
}

}  // namespace

Timers::~Timers() {
  for (auto& [slot, t] : timers_) {
    if (t.own_fd >= 0) close(t.own_fd);
  }
}

uint32_t Timers::claim(pid_t pid, pid_t tid, uint32_t reason) {
  uint32_t i = detail::claim_waiter_slot(seg_, pid, tid, abi::kNoProcess, true);
  if (i == detail::kNoSlot) {
    fprintf(stderr, "vtime: waiter table full (%u slots): a timer of pid %d stays unarmed\n", abi::kWaiterSlots,
            static_cast<int>(pid));
    return i;
  }
  auto& s = seg_.waiters[i];
  s.reason.store(reason, std::memory_order_relaxed);
  s.wake_kind.store(abi::kWakeTracer, std::memory_order_relaxed);
  s.tracer_flags.store(0, std::memory_order_relaxed);
  return i;
}

bool Timers::owns(uint32_t slot, const Timer& t) const {
  const auto& s = seg_.waiters[slot];
  return s.state.load(std::memory_order_acquire) != abi::kFree && s.is_timer.load() != 0 &&
         s.wake_kind.load() == abi::kWakeTracer && s.pid.load() == t.pid;
}

void Timers::release(uint32_t slot) {
  auto it = timers_.find(slot);
  if (it == timers_.end()) return;
  bool ours = owns(slot, it->second);
  if (it->second.own_fd >= 0) close(it->second.own_fd);
  timers_.erase(it);
  if (!ours) return;  // the controller reclaimed it with its dead process: someone else's now
  detail::free_slot(seg_.waiters[slot]);
  detail::notify_activity(seg_);
}

void Timers::drop_stale() {
  for (auto it = timers_.begin(); it != timers_.end();) {
    auto next = std::next(it);
    if (!owns(it->first, it->second)) release(it->first);
    it = next;
  }
}

Timers::Timer* Timers::timerfd(pid_t pid, int fd, uint32_t* slot) {
  if (fd < 0) return nullptr;
  drop_stale();
  for (auto& [i, t] : timers_) {
    if (t.kind == Kind::kTimerfd && same_file(pid, fd, t.own_fd)) {
      *slot = i;
      return &t;
    }
  }
  return nullptr;
}

Timers::Timer* Timers::posix(pid_t tid, pid_t pid, int id, uint32_t* slot) {
  drop_stale();
  for (auto& [i, t] : timers_) {
    if (t.kind == Kind::kPosix && t.pid == pid && t.id == id) {
      *slot = i;
      return &t;
    }
  }
  // Not armed before: the kernel's record of the timer says which clock and which notification.
  std::ifstream f("/proc/" + std::to_string(pid) + "/timers");
  std::string line;
  bool found = false;
  Timer t;
  t.kind = Kind::kPosix;
  t.pid = pid;
  t.id = id;
  t.clock = -1;
  while (std::getline(f, line)) {
    if (line.compare(0, 4, "ID: ") == 0) {
      if (found) break;  // the block of our id is over
      found = atoi(line.c_str() + 4) == id;
    } else if (!found) {
      continue;
    } else if (line.compare(0, 8, "signal: ") == 0) {
      char* end = nullptr;
      t.signo = static_cast<int>(strtol(line.c_str() + 8, &end, 10));
      if (*end == '/') t.value = strtoull(end + 1, nullptr, 16);
    } else if (line.compare(0, 8, "notify: ") == 0) {
      std::string n = line.substr(8);
      size_t dot = n.find('.');
      if (n.compare(0, 5, "none/") == 0) {
        t.notify = SIGEV_NONE;
      } else if (n.compare(0, 11, "signal/tid.") == 0) {
        t.notify = SIGEV_THREAD_ID;
        t.notify_tid = dot == std::string::npos ? 0 : atoi(n.c_str() + dot + 1);
      } else {
        t.notify = SIGEV_SIGNAL;
      }
    } else if (line.compare(0, 9, "ClockID: ") == 0) {
      t.clock = atoi(line.c_str() + 9);
    }
  }
  if (!found || !timer_clock(t.clock)) return nullptr;
  uint32_t i = claim(pid, tid, abi::kReasonPosixTimer);
  if (i == detail::kNoSlot) return nullptr;
  *slot = i;
  return &timers_.emplace(i, t).first->second;
}

Timers::Timer* Timers::itimer(pid_t tid, pid_t pid, bool create, uint32_t* slot) {
  drop_stale();
  for (auto& [i, t] : timers_) {
    if (t.kind == Kind::kItimer && t.pid == pid) {
      *slot = i;
      return &t;
    }
  }
  if (!create) return nullptr;
  uint32_t i = claim(pid, tid, abi::kReasonAlarm);
  if (i == detail::kNoSlot) return nullptr;
  Timer t;
  t.kind = Kind::kItimer;
  t.pid = pid;
  t.clock = CLOCK_REALTIME;
  *slot = i;
  return &timers_.emplace(i, t).first->second;
}

long Timers::settime(pid_t pid, Timer& t, uint32_t slot, bool absolute, uint64_t spec, uint64_t old) {
  itimerspec v{};
  if (!read_mem(pid, spec, &v, sizeof v)) return -EFAULT;
  if (!detail::valid_itimerspec(v)) return -EINVAL;
  v = detail::bounded(v);
  const auto& clk = seg_.header.clock;
  TimePoint now = Session::read_clock(clk);
  if (old != 0) {
    itimerspec cur = detail::timer_slot_value(seg_, slot, t.interval_ns, now);
    if (!write_mem(pid, old, &cur, sizeof cur)) return -EFAULT;
  }
  // Re-arming discards expirations not read yet, as the kernel does.
  if (t.kind == Kind::kTimerfd) drop_expirations(t.own_fd);
  t.interval_ns = from_timespec(v.it_interval).ns();
  t.overrun = 0;
  if (v.it_value.tv_sec == 0 && v.it_value.tv_nsec == 0) {
    detail::disarm_timer_slot(seg_, slot);
    return 0;
  }
  bool realtime = absolute && detail::is_realtime_clock(t.clock);
  int64_t shift = clk.realtime_shift_ns.load(std::memory_order_acquire);
  TimePoint deadline =
      absolute ? TimePoint::origin() + (from_timespec(v.it_value) - nanoseconds(realtime ? clk.epoch_ns + shift : clk.mono_origin_ns))
               : now + from_timespec(v.it_value);
  // An absolute time already past fires at once (at the controller's next decision).
  if (deadline < now) deadline = now;
  detail::arm_timer_slot(seg_, slot, deadline, realtime, shift);
  return 0;
}

long Timers::gettime(pid_t pid, const Timer& t, uint32_t slot, uint64_t out) {
  itimerspec cur = detail::timer_slot_value(seg_, slot, t.interval_ns, Session::read_clock(seg_.header.clock));
  return write_mem(pid, out, &cur, sizeof cur) ? 0 : -EFAULT;
}

long Timers::set_itimer(pid_t tid, pid_t pid, const itimerval& v, itimerval* old) {
  if (v.it_value.tv_sec < 0 || v.it_value.tv_usec < 0 || v.it_value.tv_usec >= 1000000 || v.it_interval.tv_sec < 0 ||
      v.it_interval.tv_usec < 0 || v.it_interval.tv_usec >= 1000000) {
    return -EINVAL;
  }
  uint32_t slot = 0;
  Timer* t = itimer(tid, pid, true, &slot);
  if (!t) return -EAGAIN;
  itimerval b = detail::bounded(v);
  TimePoint now = Session::read_clock(seg_.header.clock);
  itimerspec cur = detail::timer_slot_value(seg_, slot, t->interval_ns, now);
  old->it_value = to_timeval(from_timespec(cur.it_value));
  old->it_interval = to_timeval(from_timespec(cur.it_interval));
  t->interval_ns = from_timeval(b.it_interval).ns();
  if (b.it_value.tv_sec == 0 && b.it_value.tv_usec == 0) {
    detail::disarm_timer_slot(seg_, slot);
  } else {
    detail::arm_timer_slot(seg_, slot, now + from_timeval(b.it_value), false, 0);
  }
  return 0;
}

Timers::Action Timers::on_call(pid_t tid, pid_t pid, user_regs_struct& r, long* result) {
  long nr = static_cast<long>(r.orig_rax);
  VTIME_LOGF("tracer", LogLevel::kDebug, "tid %d: timer call %ld", static_cast<int>(tid), nr);
  uint32_t slot = 0;
  switch (nr) {
    case SYS_timerfd_create: {
      auto clk = static_cast<clockid_t>(r.rdi);
      if (!timer_clock(clk) || (r.rsi & ~static_cast<unsigned long long>(TFD_NONBLOCK | TFD_CLOEXEC)) != 0) {
        return Action::kPass;  // the kernel's timer (or its EINVAL)
      }
      // TFD_NONBLOCK and TFD_CLOEXEC are EFD_NONBLOCK and EFD_CLOEXEC (O_NONBLOCK, O_CLOEXEC).
      r.orig_rax = SYS_eventfd2;
      r.rdi = 0;
      creating_[tid] = clk;
      return Action::kFollowExit;
    }
    case SYS_timerfd_settime:
    case SYS_timerfd_gettime:
    case SYS_timer_settime:
    case SYS_timer_gettime:
    case SYS_timer_getoverrun: {
      bool fd = nr == SYS_timerfd_settime || nr == SYS_timerfd_gettime;
      Timer* t = fd ? timerfd(pid, static_cast<int>(r.rdi), &slot) : posix(tid, pid, static_cast<int>(r.rdi), &slot);
      if (!t) return Action::kPass;  // not a timer of ours: the kernel's (or its EINVAL)
      if (nr == SYS_timerfd_settime) {
        bool bad_flags = (r.rsi & ~static_cast<unsigned long long>(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)) != 0;
        *result = bad_flags ? -EINVAL : settime(pid, *t, slot, (r.rsi & TFD_TIMER_ABSTIME) != 0, r.rdx, r.r10);
      } else if (nr == SYS_timer_settime) {
        *result = settime(pid, *t, slot, (r.rsi & TIMER_ABSTIME) != 0, r.rdx, r.r10);
      } else if (nr == SYS_timer_getoverrun) {
        *result = t->overrun;
      } else {
        *result = gettime(pid, *t, slot, r.rsi);
      }
      return Action::kDone;
    }
    case SYS_timer_delete: {
      for (auto& [i, t] : timers_) {
        if (t.kind == Kind::kPosix && t.pid == pid && t.id == static_cast<int>(r.rdi)) {
          release(i);
          break;
        }
      }
      return Action::kPass;  // the kernel deletes its (never armed) timer
    }
    case SYS_setitimer: {
      if (r.rdi != ITIMER_REAL) return Action::kPass;
      itimerval v{}, old{};  // a NULL value disarms (Linux accepts it)
      if (r.rsi != 0 && !read_mem(pid, r.rsi, &v, sizeof v)) {
        *result = -EFAULT;
      } else {
        *result = set_itimer(tid, pid, v, &old);
        if (*result == 0 && r.rdx != 0 && !write_mem(pid, r.rdx, &old, sizeof old)) *result = -EFAULT;
      }
      return Action::kDone;
    }
    case SYS_getitimer: {
      if (r.rdi != ITIMER_REAL) return Action::kPass;
      itimerval v{};
      if (Timer* t = itimer(tid, pid, false, &slot)) {
        itimerspec cur = detail::timer_slot_value(seg_, slot, t->interval_ns, Session::read_clock(seg_.header.clock));
        v.it_value = to_timeval(from_timespec(cur.it_value));
        v.it_interval = to_timeval(from_timespec(cur.it_interval));
      }
      *result = write_mem(pid, r.rsi, &v, sizeof v) ? 0 : -EFAULT;
      return Action::kDone;
    }
    case SYS_alarm: {
      itimerval v{}, old{};
      v.it_value.tv_sec = static_cast<time_t>(static_cast<unsigned>(r.rdi));
      *result = set_itimer(tid, pid, v, &old) == 0 ? detail::alarm_seconds_left(old) : 0;
      return Action::kDone;
    }
    default:
      return Action::kPass;
  }
}

void Timers::created(pid_t tid, pid_t pid, long result) {
  auto it = creating_.find(tid);
  if (it == creating_.end()) return;
  clockid_t clk = it->second;
  creating_.erase(it);
  if (result < 0) return;  // eventfd2 failed: the program sees the error timerfd_create would give
  int fd = static_cast<int>(result);
  int own = -1;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    own = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
    close(pidfd);
  }
  if (own < 0) {
    fprintf(stderr, "vtime: pid %d: cannot take its timerfd %d (%s): it never fires\n", static_cast<int>(pid), fd,
            strerror(errno));
    return;
  }
  uint32_t slot = claim(pid, tid, abi::kReasonTimerfd);
  if (slot == detail::kNoSlot) {
    close(own);
    return;
  }
  Timer t;
  t.kind = Kind::kTimerfd;
  t.pid = pid;
  t.id = fd;
  t.clock = clk;
  t.own_fd = own;
  timers_.emplace(slot, t);
}

bool Timers::still_open(Timer& t) {
  if (same_file(t.pid, t.id, t.own_fd)) return true;
  // Moved to another number (dup2 and close)?
  std::string dir = "/proc/" + std::to_string(t.pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  bool open = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = atoi(e->d_name);
    if (same_file(t.pid, fd, t.own_fd)) {
      t.id = fd;
      open = true;
      break;
    }
  }
  closedir(d);
  return open;
}

void Timers::deliver(Timer& t, uint64_t count) {
  switch (t.kind) {
    case Kind::kTimerfd: {
      ssize_t w = write(t.own_fd, &count, sizeof count);  // wakes readers, poll and epoll
      (void)w;
      return;
    }
    case Kind::kItimer:
      kill(t.pid, SIGALRM);
      return;
    case Kind::kPosix: {
      if (t.notify == SIGEV_NONE) return;
      bool to_thread = t.notify == SIGEV_THREAD_ID;
      std::string base = "/proc/" + std::to_string(t.pid);
      // Like the kernel, a timer has at most one signal queued: expirations while it is pending
      // are overruns.
      bool pending = to_thread ? signal_pending(base + "/task/" + std::to_string(t.notify_tid) + "/status", "SigPnd", t.signo)
                               : signal_pending(base + "/status", "ShdPnd", t.signo);
      if (pending) {
        t.overrun += static_cast<int>(count);
        return;
      }
      siginfo_t info;
      memset(&info, 0, sizeof info);
      info.si_signo = t.signo;
      info.si_code = SI_TIMER;
      info.si_timerid = t.id;
      info.si_overrun = static_cast<int>(count - 1);
      info.si_value.sival_ptr = reinterpret_cast<void*>(t.value);
      t.overrun = info.si_overrun;
      if (to_thread) {
        syscall(SYS_rt_tgsigqueueinfo, t.pid, t.notify_tid, t.signo, &info);
      } else {
        syscall(SYS_rt_sigqueueinfo, t.pid, t.signo, &info);
      }
      return;
    }
  }
}

bool Timers::fire(uint32_t slot) {
  auto it = timers_.find(slot);
  if (it == timers_.end()) return false;
  Timer& t = it->second;
  if (!owns(slot, t)) {
    release(slot);  // a stale record: the slot was reclaimed and may be a thread's wait now
    return false;
  }
  if (t.kind == Kind::kTimerfd && !still_open(t)) {
    release(slot);  // closed: nobody can read it any more
    return true;
  }
  // The effect first, then the slot leaves Woken: until then the controller holds the clock,
  // and from then on the woken thread is running (or the signal is pending, as natively).
  TimePoint now = Session::read_clock(seg_.header.clock);
  int64_t due = seg_.waiters[slot].deadline.load();
  uint64_t count = t.interval_ns > 0 ? static_cast<uint64_t>((now.ns() - due) / t.interval_ns) + 1 : 1;
  VTIME_LOGF("tracer", LogLevel::kDebug, "pid %d: timer (slot %u) fires, %llu expiration(s)", static_cast<int>(t.pid), slot,
             static_cast<unsigned long long>(count));
  deliver(t, count);
  detail::fire_timer_slot(seg_, slot, t.interval_ns, now);
  return true;
}

void Timers::on_exec(pid_t pid) {
  for (auto it = timers_.begin(); it != timers_.end();) {
    auto next = std::next(it);
    if (it->second.kind == Kind::kPosix && it->second.pid == pid) release(it->first);
    it = next;
  }
}

void Timers::forget_thread(pid_t tid) { creating_.erase(tid); }

void Timers::on_exit(pid_t pid) {
  for (auto it = timers_.begin(); it != timers_.end();) {
    auto next = std::next(it);
    if (it->second.pid == pid) release(it->first);
    it = next;
  }
}

}  // namespace vtime::tracer
