// C API: POSIX timers, alarm/setitimer(ITIMER_REAL) and timerfd on the virtual clock.
#include <vtime/vtime.h>

#include <vtime/internal/agent.h>
#include <vtime/internal/context.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>
#include "libc.h"
#include <vtime/internal/timer_slots.h>
#include <vtime/internal/timers.h>
#include <vtime/internal/waits.h>

#include <sys/eventfd.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>

using namespace vtime;
using namespace vtime::detail;

namespace {

constexpr int kMaxTimers = 256;
// Our timer_t values carry this tag, so they never collide with glibc's (heap pointers or small
// kernel ids) for the CPU-time clocks we pass through.
constexpr uintptr_t kTimerTag = 0x7654000000000000ULL;

enum class Kind { kPosix, kItimer, kTimerfd };

struct VTimer {
  bool used = false;
  Kind kind = Kind::kPosix;
  uint32_t slot = 0;
  clockid_t clock = CLOCK_MONOTONIC;
  int64_t interval_ns = 0;
  int overrun = 0;
  sigevent sev{};
  bool realtime_abs = false;   // armed with an absolute time on a realtime clock
  bool cancel_on_set = false;  // timerfd: TFD_TIMER_CANCEL_ON_SET with realtime_abs
  uint64_t sets_seen = 0;      // abi::ClockState::realtime_sets when armed / last cancelled
  bool cancelled = false;      // timerfd: a clock set cancelled it; the next read says ECANCELED
  int fd = -1;     // timerfd: the eventfd the program reads
  pid_t tid = 0;   // creator, for the deadlock report
};

// Guarded by the agent lock (firing happens on the agent thread under it).
VTimer g_timers[kMaxTimers];
int g_itimer = -1;
// How many timerfds exist: close() skips the lock entirely while there are none.
std::atomic<int> g_timerfd_count{0};

uint32_t claim_timer_slot(ProcessContext& c, uint32_t reason) {
  ThreadState& ts = thread_state();
  uint32_t i = try_claim_slot(c, ts.tid ? ts.tid : gettid_raw(), true);
  if (i != kNoSlot) {
    c.seg->waiters[i].reason.store(reason);
    c.seg->waiters[i].wake_kind.store(abi::kWakeAgent);
  }
  return i;
}

void* thread_trampoline(void* arg) {
  auto* sev = static_cast<sigevent*>(arg);
  sigevent copy = *sev;
  delete sev;
  copy.sigev_notify_function(copy.sigev_value);
  return nullptr;
}

// A process-directed timer signal still pending (blocked everywhere) is not queued again: like
// the kernel, we take it back and queue one signal whose si_overrun counts the expirations it
// stands for. Returns the overrun already carried by the pending signal, or -1 if none pending.
int take_back_pending(ProcessContext& c, int sig, int index) {
  sigset_t pending;
  sigpending(&pending);
  if (!sigismember(&pending, sig)) return -1;
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  siginfo_t info;
  timespec zero{0, 0};
  // The agent blocks every signal, so this dequeues from the process's shared pending set.
  if (libc().sigtimedwait(&one, &info, &zero) != sig) return -1;
  if (info.si_code == SI_TIMER && info.si_timerid == index) return info.si_overrun;
  // Somebody else's signal: put it back untouched.
  raw_syscall6(SYS_rt_sigqueueinfo, c.pid, sig, reinterpret_cast<long>(&info), 0, 0, 0);
  return -1;
}

void deliver(ProcessContext& c, VTimer& t, int index) {
  switch (t.kind) {
    case Kind::kTimerfd: {
      // Runs on the agent thread; the count is the number of expirations since the last read.
      break;
    }
    case Kind::kItimer:
      raw_syscall6(SYS_kill, c.pid, SIGALRM, 0, 0, 0, 0);
      break;
    case Kind::kPosix:
      if (t.sev.sigev_notify == SIGEV_NONE) break;
      if (t.sev.sigev_notify == SIGEV_THREAD) {
        pthread_attr_t* attr = reinterpret_cast<pthread_attr_t*>(t.sev.sigev_notify_attributes);
        pthread_attr_t local;
        if (!attr) {
          pthread_attr_init(&local);
          attr = &local;
        }
        pthread_attr_setdetachstate(attr, PTHREAD_CREATE_DETACHED);
        pthread_t th;
        pthread_create(&th, attr, thread_trampoline, new sigevent(t.sev));
        if (attr == &local) pthread_attr_destroy(&local);
        break;
      }
      {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        info.si_signo = t.sev.sigev_signo;
        info.si_code = SI_TIMER;
        info.si_value = t.sev.sigev_value;
        info.si_timerid = index;
        info.si_overrun = t.overrun;
        if (t.sev.sigev_notify == SIGEV_THREAD_ID) {
          raw_syscall6(SYS_rt_tgsigqueueinfo, c.pid, t.sev._sigev_un._tid, t.sev.sigev_signo,
                       reinterpret_cast<long>(&info), 0, 0);
        } else {
          int carried = take_back_pending(c, t.sev.sigev_signo, index);
          if (carried >= 0) {
            t.overrun += carried + 1;
            info.si_overrun = t.overrun;
          }
          raw_syscall6(SYS_rt_sigqueueinfo, c.pid, t.sev.sigev_signo, reinterpret_cast<long>(&info), 0, 0, 0);
        }
      }
      break;
  }
}

// Agent action: the timer's slot is due. Count the periods the clock jump covered, re-arm.
void fire(ProcessContext& c, uint32_t slot, void*, uintptr_t index) {
  VTimer& t = g_timers[index];
  if (!t.used || t.slot != slot) return;
  uint64_t count = fire_timer_slot(*c.seg, slot, t.interval_ns, now(c));
  t.overrun = static_cast<int>(count - 1);
  if (t.kind == Kind::kTimerfd) {
    ssize_t r = ::write(t.fd, &count, sizeof count);
    (void)r;
  }
  deliver(c, t, static_cast<int>(index));
}

int alloc_timer(ProcessContext& c, Kind kind, clockid_t clk, uint32_t reason) {
  for (int i = 0; i < kMaxTimers; ++i) {
    if (g_timers[i].used) continue;
    uint32_t slot = claim_timer_slot(c, reason);
    if (slot == kNoSlot) return -1;
    g_timers[i] = VTimer{};
    g_timers[i].used = true;
    g_timers[i].kind = kind;
    g_timers[i].clock = clk;
    g_timers[i].slot = slot;
    AgentAction a;
    a.fn = fire;
    a.arg2 = static_cast<uintptr_t>(i);
    a.persistent = true;
    agent_unlock();
    agent_add(c, slot, a);
    agent_lock();
    return i;
  }
  return -1;
}

void free_timer(ProcessContext& c, int i) {
  VTimer& t = g_timers[i];
  if (!t.used) return;
  free_slot(c.seg->waiters[t.slot]);
  notify_activity(*c.seg);
  uint32_t slot = t.slot;
  t = VTimer{};
  agent_unlock();
  agent_remove(c, slot);
  agent_lock();
}

// Remaining time and interval of a timer, as itimerspec.
itimerspec current(ProcessContext& c, const VTimer& t) { return timer_slot_value(*c.seg, t.slot, t.interval_ns, now(c)); }

bool valid_spec(const itimerspec* v) { return v && valid_itimerspec(*v); }

void set(ProcessContext& c, VTimer& t, int flags, bool abs_flag, const itimerspec* spec) {
  itimerspec capped = bounded(*spec);
  const itimerspec* v = &capped;
  bool arm = v->it_value.tv_sec != 0 || v->it_value.tv_nsec != 0;
  t.interval_ns = from_timespec(v->it_interval).ns();
  t.overrun = 0;
  if (!arm) {
    disarm_timer_slot(*c.seg, t.slot);
    return;
  }
  t.realtime_abs = abs_flag && is_realtime_clock(t.clock);
  t.cancel_on_set = t.kind == Kind::kTimerfd && t.realtime_abs && (flags & TFD_TIMER_CANCEL_ON_SET) != 0;
  t.sets_seen = c.seg->header.clock.realtime_sets.load();
  t.cancelled = false;
  TimePoint deadline = abs_flag ? from_clock(c, t.clock, v->it_value) : now(c) + from_timespec(v->it_value);
  int64_t shift = t_realtime_mark.shift;  // the one from_clock used
  t_realtime_mark.set = false;
  // An absolute time already past fires at once (at the controller's next decision).
  if (deadline < now(c)) deadline = now(c);
  arm_timer_slot(*c.seg, t.slot, deadline, t.realtime_abs, shift);
}

// Drops the expirations a timerfd's eventfd holds, without blocking on an empty one (the
// eventfd blocks unless the timerfd was created with TFD_NONBLOCK). One read takes the whole count.
void drop_expirations(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (libc().poll(&p, 1, 0) == 1) {
    uint64_t drop;
    ssize_t r = libc().read(fd, &drop, sizeof drop);
    (void)r;
  }
}

int timer_index(timer_t id) {
  auto v = reinterpret_cast<uintptr_t>(id);
  if ((v & 0xffff000000000000ULL) != kTimerTag) return -1;
  int i = static_cast<int>(v & 0xffff);
  return (i < kMaxTimers && g_timers[i].used && g_timers[i].kind == Kind::kPosix) ? i : -1;
}

int timerfd_index(int fd) {
  if (fd < 0) return -1;
  for (int i = 0; i < kMaxTimers; ++i) {
    if (g_timers[i].used && g_timers[i].kind == Kind::kTimerfd && g_timers[i].fd == fd) return i;
  }
  return -1;
}

struct Locked {
  Locked() { agent_lock(); }
  ~Locked() { agent_unlock(); }
};

}  // namespace

namespace vtime::detail {

void timers_after_fork_child() {
  for (auto& t : g_timers) t = VTimer{};
  g_itimer = -1;
  g_timerfd_count.store(0);
}

void timers_forget_fd(int fd) {
  if (g_timerfd_count.load(std::memory_order_relaxed) == 0) return;
  ProcessContext* c = context();
  if (!c) return;
  Locked l;
  int i = timerfd_index(fd);
  if (i >= 0) {
    free_timer(*c, i);
    g_timerfd_count.fetch_sub(1, std::memory_order_relaxed);
  }
}

void timers_on_clock_set(ProcessContext& c) {
  uint64_t sets = c.seg->header.clock.realtime_sets.load();
  for (auto& t : g_timers) {
    if (!t.used || !t.cancel_on_set || t.sets_seen == sets) continue;
    t.sets_seen = sets;
    t.cancelled = true;
    uint64_t one = 1;  // readable now: the read that follows says ECANCELED
    ssize_t r = ::write(t.fd, &one, sizeof one);
    (void)r;
  }
}

// A timerfd armed with TFD_TIMER_CANCEL_ON_SET whose clock was set since: its next read fails
// with ECANCELED, once, and the expirations counted so far are dropped (as Linux does).
static bool take_cancel(ProcessContext& c, int i) {
  VTimer& t = g_timers[i];
  if (!t.cancel_on_set) return false;
  uint64_t sets = c.seg->header.clock.realtime_sets.load();
  if (!t.cancelled && t.sets_seen == sets) return false;
  t.sets_seen = sets;
  t.cancelled = false;
  drop_expirations(t.fd);
  return true;
}

ssize_t timers_read(int fd, void* buf, size_t n) {
  if (g_timerfd_count.load(std::memory_order_relaxed) == 0) return libc().read(fd, buf, n);
  ProcessContext* c = context();
  if (!c) return libc().read(fd, buf, n);
  {
    Locked l;
    int i = timerfd_index(fd);
    if (i < 0) return libc().read(fd, buf, n);
    if (take_cancel(*c, i)) {
      errno = ECANCELED;
      return -1;
    }
  }
  ssize_t r = libc().read(fd, buf, n);
  if (r > 0) {
    // A set while the read blocked: the agent's wake-up count is not an expiration.
    Locked l;
    int i = timerfd_index(fd);
    if (i >= 0 && take_cancel(*c, i)) {
      errno = ECANCELED;
      return -1;
    }
  }
  return r;
}

}  // namespace vtime::detail

extern "C" {

int vtime_timer_create(clockid_t clk, struct sigevent* sev, timer_t* timerid) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().timer_create(clk, sev, timerid);
  if (sev && sev->sigev_notify != SIGEV_NONE && sev->sigev_notify != SIGEV_SIGNAL &&
      sev->sigev_notify != SIGEV_THREAD && sev->sigev_notify != SIGEV_THREAD_ID) {
    errno = EINVAL;
    return -1;
  }
  Locked l;
  int i = alloc_timer(*c, Kind::kPosix, clk, abi::kReasonPosixTimer);
  if (i < 0) {
    errno = EAGAIN;
    return -1;
  }
  if (sev) {
    g_timers[i].sev = *sev;
  } else {
    g_timers[i].sev.sigev_notify = SIGEV_SIGNAL;
    g_timers[i].sev.sigev_signo = SIGALRM;
    g_timers[i].sev.sigev_value.sival_int = i;
  }
  *timerid = reinterpret_cast<timer_t>(kTimerTag | static_cast<uintptr_t>(i));
  return 0;
}

int vtime_timer_settime(timer_t timerid, int flags, const struct itimerspec* value, struct itimerspec* old) {
  ProcessContext* c = context();
  if (!c) return libc().timer_settime(timerid, flags, value, old);
  Locked l;
  int i = timer_index(timerid);
  if (i < 0) return libc().timer_settime(timerid, flags, value, old);
  if (!valid_spec(value)) {
    errno = EINVAL;
    return -1;
  }
  if (old) *old = current(*c, g_timers[i]);
  set(*c, g_timers[i], flags, (flags & TIMER_ABSTIME) != 0, value);
  return 0;
}

int vtime_timer_gettime(timer_t timerid, struct itimerspec* value) {
  ProcessContext* c = context();
  if (!c) return libc().timer_gettime(timerid, value);
  Locked l;
  int i = timer_index(timerid);
  if (i < 0) return libc().timer_gettime(timerid, value);
  *value = current(*c, g_timers[i]);
  return 0;
}

int vtime_timer_getoverrun(timer_t timerid) {
  ProcessContext* c = context();
  if (!c) return libc().timer_getoverrun(timerid);
  Locked l;
  int i = timer_index(timerid);
  if (i < 0) return libc().timer_getoverrun(timerid);
  return g_timers[i].overrun;
}

int vtime_timer_delete(timer_t timerid) {
  ProcessContext* c = context();
  if (!c) return libc().timer_delete(timerid);
  Locked l;
  int i = timer_index(timerid);
  if (i < 0) return libc().timer_delete(timerid);
  free_timer(*c, i);
  return 0;
}

int vtime_setitimer(int which, const struct itimerval* value, struct itimerval* old) {
  ProcessContext* c = context();
  if (!c || which != ITIMER_REAL) return libc().setitimer(which, value, old);
  if (!value || value->it_value.tv_usec < 0 || value->it_value.tv_usec >= 1000000 ||
      value->it_interval.tv_usec < 0 || value->it_interval.tv_usec >= 1000000) {
    errno = EINVAL;
    return -1;
  }
  Locked l;
  if (g_itimer < 0) g_itimer = alloc_timer(*c, Kind::kItimer, CLOCK_REALTIME, abi::kReasonAlarm);
  if (g_itimer < 0) {
    errno = EAGAIN;
    return -1;
  }
  VTimer& t = g_timers[g_itimer];
  if (old) {
    itimerspec cur = current(*c, t);
    old->it_value = to_timeval(from_timespec(cur.it_value));
    old->it_interval = to_timeval(from_timespec(cur.it_interval));
  }
  itimerspec spec{};
  itimerval b = bounded(*value);
  spec.it_value = to_timespec(from_timeval(b.it_value));
  spec.it_interval = to_timespec(from_timeval(b.it_interval));
  set(*c, t, 0, false, &spec);
  return 0;
}

int vtime_getitimer(int which, struct itimerval* value) {
  ProcessContext* c = context();
  if (!c || which != ITIMER_REAL) return libc().getitimer(which, value);
  Locked l;
  *value = itimerval{};
  if (g_itimer >= 0) {
    itimerspec cur = current(*c, g_timers[g_itimer]);
    value->it_value = to_timeval(from_timespec(cur.it_value));
    value->it_interval = to_timeval(from_timespec(cur.it_interval));
  }
  return 0;
}

unsigned int vtime_alarm(unsigned int secs) {
  ProcessContext* c = context();
  if (!c) return libc().alarm(secs);
  itimerval v{}, old{};
  v.it_value.tv_sec = secs;
  vtime_setitimer(ITIMER_REAL, &v, &old);
  return alarm_seconds_left(old);
}

int vtime_timerfd_create(int clk, int flags) {
  ProcessContext* c = context();
  if (!c || !is_virtual_clock(clk)) return libc().timerfd_create(clk, flags);
  if (flags & ~(TFD_NONBLOCK | TFD_CLOEXEC)) {
    errno = EINVAL;
    return -1;
  }
  // An eventfd has exactly timerfd's read semantics: 8 bytes, the count since the last read.
  int fd = eventfd(0, ((flags & TFD_NONBLOCK) ? EFD_NONBLOCK : 0) | ((flags & TFD_CLOEXEC) ? EFD_CLOEXEC : 0));
  if (fd < 0) return -1;
  Locked l;
  int i = alloc_timer(*c, Kind::kTimerfd, clk, abi::kReasonTimerfd);
  if (i < 0) {
    libc().close(fd);
    errno = EMFILE;
    return -1;
  }
  g_timers[i].fd = fd;
  g_timerfd_count.fetch_add(1, std::memory_order_relaxed);
  return fd;
}

int vtime_timerfd_settime(int fd, int flags, const struct itimerspec* value, struct itimerspec* old) {
  ProcessContext* c = context();
  if (!c) return libc().timerfd_settime(fd, flags, value, old);
  Locked l;
  int i = timerfd_index(fd);
  if (i < 0) return libc().timerfd_settime(fd, flags, value, old);
  if (!valid_spec(value)) {
    errno = EINVAL;
    return -1;
  }
  if (old) *old = current(*c, g_timers[i]);
  drop_expirations(fd);  // re-arming discards expirations not read yet, as the kernel does
  set(*c, g_timers[i], flags, (flags & TFD_TIMER_ABSTIME) != 0, value);
  return 0;
}

int vtime_timerfd_gettime(int fd, struct itimerspec* value) {
  ProcessContext* c = context();
  if (!c) return libc().timerfd_gettime(fd, value);
  Locked l;
  int i = timerfd_index(fd);
  if (i < 0) return libc().timerfd_gettime(fd, value);
  *value = current(*c, g_timers[i]);
  return 0;
}

}  // extern "C"
