// Notified sleeps: the controller's part (see notify_sleeps.h).
#include <vtime/internal/notify_sleeps.h>

#include <vtime/internal/context.h>
#include <vtime/internal/futex.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/timer_slack.h>
#include <vtime/internal/trace_request.h>
#include <vtime/internal/waits.h>

#include <vtime/log.h>
#include <vtime/session.h>
#include <vtime/tree_watch.h>

#include <fcntl.h>
#include <poll.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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

bool notify_sleeps_supported(std::string* why) {
  // pidfd_getfd on ourselves: the kernel has it (5.6) and no seccomp policy refuses it.
  const int self = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  const int copy = self < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, self, self, 0));
  const int err = errno;
  if (copy >= 0) close(copy);
  if (self >= 0) close(self);
  if (copy < 0) {
    if (why) *why = std::string(self < 0 ? "pidfd_open: " : "pidfd_getfd: ") + strerror(err);
    return false;
  }
  // In a child: a filter cannot be taken back. It installs the notify filter with a listener and
  // asks for the synchronous wake-up; its exit status says whether the kernel took both.
  pid_t child = static_cast<pid_t>(raw_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0));
  if (child < 0) {
    if (why) *why = std::string("fork: ") + strerror(errno);
    return false;
  }
  if (child == 0) {
    raw_syscall6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
    uint16_t len = 0;
    const sock_filter* filter = notify_filter(&len);
    sock_fprog prog{len, const_cast<sock_filter*>(filter)};
    long fd = raw_syscall6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                           reinterpret_cast<long>(&prog), 0, 0, 0);
    if (fd < 0) raw_syscall6(SYS_exit_group, 1, 0, 0, 0, 0, 0);
    bool ok = raw_syscall6(SYS_ioctl, fd, static_cast<long>(kNotifSetFlags), static_cast<long>(kNotifSyncWakeUp), 0, 0, 0) == 0;
    raw_syscall6(SYS_exit_group, ok ? 0 : 2, 0, 0, 0, 0, 0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (why) {
    *why = WIFEXITED(status) && WEXITSTATUS(status) == 1 ? "seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER) refused"
           : WIFEXITED(status) && WEXITSTATUS(status) == 2
               ? "no synchronous wake-up for seccomp notifications (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6)"
               : "the probe died";
  }
  return false;
}

NotifiedSleeps::~NotifiedSleeps() {
  if (watcher_.joinable()) {
    const uint64_t one = 1;
    if (write(stop_, &one, sizeof one) != static_cast<ssize_t>(sizeof one)) abort();  // it would block the join for ever
    watcher_.join();
  }
  close_copies(true);
  for (int fd : {copies_look_, copies_watch_, stop_}) {
    if (fd >= 0) close(fd);
  }
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
    taken_at_.reset();  // its notifications so far were never looked for
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
  taken_at_.reset();
}

bool NotifiedSleeps::take(TreeWatch* watch) {
  std::lock_guard<std::mutex> lock(mu_);
  adopt(watch);
  if (listeners_.empty()) return false;
  // Without the kernel count (given up: the /proc rule decides) no look hears of threads that
  // exit, and a thread id may come back in another process: ask /proc every time.
  if (!watch) process_of_.clear();
  if (in_flight_ != 0) forget_ended();
  // The count's generation, read with no thread of the tree active, before any look below.
  std::optional<uint64_t> start;
  if (watch) {
    const TreeWatch::Counts c = watch->counts();
    if (c.active == 0) start = c.generation;
  }
  bool changed = false;
  bool all_taken = false;  // the last look found none left
  int took = 0;             // notifications taken
  // Bounded: each round takes at least one notification or closes a listener.
  // A listener stays readable while it holds notifications: several threads of a process may
  // sleep at once, and each comes as its own.
  for (int round = 0; round < 256; ++round) {
    epoll_event ev[16];
    int n = epoll_wait(epoll_, ev, 16, 0);
    if (n <= 0) {
      all_taken = n == 0;
      break;
    }
    for (int k = 0; k < n; ++k) {
      const int fd = ev[k].data.fd;
      auto it = std::find_if(listeners_.begin(), listeners_.end(), [&](const Listener& l) { return l.fd == fd; });
      if (it == listeners_.end()) continue;
      if ((ev[k].events & EPOLLIN) != 0) {
        ++took;
        changed = take_one(fd, watch) || changed;
      } else if ((ev[k].events & (EPOLLHUP | EPOLLERR)) != 0) {
        retire(static_cast<size_t>(it - listeners_.begin()));  // no process uses the filter any more
      }
    }
    // One notification taken, and the count moved by exactly one thread waking and blocking
    // since the last time every notification had been taken (no thread active at either end:
    // each thread that ran since adds two, a birth or an exit one more): only that thread can
    // have notified, once, and this was it. No second look (a system call per notified sleep).
    if (round == 0 && took == 1 && n == 1 && start && taken_at_ && *start == *taken_at_ + 2) {
      all_taken = true;
      break;
    }
  }
  // Every notification up to `start` is taken: the next take may rely on it.
  if (all_taken && start) {
    taken_at_ = start;
  } else {
    taken_at_.reset();
  }
  // A Go poller's wait whose descriptor is ready runs: the watcher may not have seen it yet, and
  // an idle decision must not (the thread that made it ready is why the tree was busy).
  if (epoll_waits_ != 0) changed = release_ready() || changed;
  return changed;
}

int64_t NotifiedSleeps::read_timespec(pid_t pid, pid_t tid, uint64_t addr) {
  timespec ts{};
  bool read = false;
  if (const int fd = pid == 0 ? -1 : mem_file(pid); fd >= 0) {
    read = pread(fd, &ts, sizeof ts, static_cast<off_t>(addr)) == static_cast<ssize_t>(sizeof ts);
    if (!read) {
      // The address space it was opened on is gone (an exec: reads return nothing), or the
      // address is bad: the call below says which, and the next sleep opens the file anew.
      close(fd);
      mem_of_.erase(pid);
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

int NotifiedSleeps::mem_file(pid_t pid) {
  auto it = mem_of_.find(pid);
  if (it == mem_of_.end()) {
    // Bounded: a tree of many short processes must not collect descriptors.
    if (mem_of_.size() >= 64) close_mem_files();
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(pid));
    int fd = open(path, O_RDWR | O_CLOEXEC);  // written to by epoll waits' answers
    if (fd < 0) fd = open(path, O_RDONLY | O_CLOEXEC);
    it = mem_of_.emplace(pid, fd).first;
  }
  return it->second;
}

bool NotifiedSleeps::write_mem(pid_t pid, pid_t tid, uint64_t addr, const void* buf, size_t len) {
  if (const int fd = mem_file(pid); fd >= 0 && pwrite(fd, buf, len, static_cast<off_t>(addr)) == static_cast<ssize_t>(len)) {
    return true;
  }
  iovec local{const_cast<void*>(buf), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_writev(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
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
  const bool epoll = req->data.nr == SYS_epoll_pwait || req->data.nr == SYS_epoll_wait;
  if (req->data.nr != SYS_clock_nanosleep && !epoll) {
    send(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);  // not a call of the notify filters'
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
      // An epoll wait's copy fired at most once since its last arming (EPOLLONESHOT), maybe
      // while this call was on its way back: the watcher must hear of the descriptor again.
      if (sl.copy >= 0 && st == abi::kWaiting) arm(static_cast<size_t>(sl.copy));
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
  if (epoll) return take_epoll(fd, id, pid, tid, a, quiet, watch);
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
  // As late as a real kernel ends it (timer_slack.h), as every other wait of the wrapped programs.
  const WaitSlack slack = wait_slack(seg_.header, abi::kReasonSleep, deadline - now);
  const uint32_t index =
      register_slot(pid, tid, deadline + slack.late_ns, slack.range_ns, abi::kReasonSleep, 0, realtime, shift);
  if (index == kNoSlot) {
    send(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
    return false;
  }
  keep(index, Sleep{fd, id, seg_.waiters[index].seq.load(std::memory_order_relaxed), tid, true, true, -1});
  return still_pending(fd, id, index, quiet, watch);
}

uint32_t NotifiedSleeps::register_slot(pid_t pid, pid_t tid, int64_t deadline, int64_t early, uint32_t reason,
                                       uint32_t flags, bool realtime, int64_t shift) {
  const uint32_t index = pid == 0 ? kNoSlot : claim_waiter_slot(seg_, pid, tid, abi::kNoProcess, false);
  if (index == kNoSlot) {
    if (pid != 0) fprintf(stderr, "vtime: waiter table full (%u slots)\n", abi::kWaiterSlots);
    return kNoSlot;
  }
  auto& s = seg_.waiters[index];
  s.deadline.store(deadline, std::memory_order_relaxed);
  s.early_ns.store(static_cast<uint32_t>(early), std::memory_order_relaxed);
  s.reason.store(reason, std::memory_order_relaxed);
  s.wake_kind.store(abi::kWakeTracer, std::memory_order_relaxed);
  const uint64_t seq = seg_.header.next_seq.fetch_add(1, std::memory_order_relaxed);
  s.seq.store(seq, std::memory_order_relaxed);
  mark_realtime(s, realtime, shift);
  s.tracer_flags.store(abi::kTracerNotify | flags, std::memory_order_relaxed);
  s.state.store(abi::kWaiting, std::memory_order_release);
  settle_realtime(seg_, s);  // a set meanwhile (through the shim) moved no slot of this one
  VTIME_LOGF("controller", LogLevel::kDebug, "tid %d waits until %lld (wait %llu, slot %u)", static_cast<int>(tid),
             static_cast<long long>(deadline), static_cast<unsigned long long>(seq), index);
  return index;
}

void NotifiedSleeps::keep(uint32_t index, const Sleep& sl) {
  if (sleeps_.size() <= index) sleeps_.resize(index + 1);
  sleeps_[index] = sl;
  ++in_flight_;
  slot_of_tid_[sl.tid] = index;
  if (sl.copy >= 0) {
    ++copies_[static_cast<size_t>(sl.copy)].waits;
    ++epoll_waits_;
  }
}

bool NotifiedSleeps::still_pending(int fd, uint64_t id, uint32_t index, const std::optional<uint64_t>& quiet,
                                   TreeWatch* watch) {
  // Still waiting in the kernel now that the slot is there (the kernel count says so when no
  // thread of the tree ran since before the notification was taken, else the kernel)? Then a
  // signal that ends the wait from here on stops the thread for the tracer after this check (the
  // kernel's lock orders the two), and the tracer finds the slot. If the wait is gone already (a
  // signal), the tracer may have looked before the slot existed: the slot goes, and if the kernel
  // restarts the call it is registered anew, with the same deadline (the clock has not moved:
  // every notification is taken before it does).
  bool still = false;
  if (quiet) {
    const TreeWatch::Counts c = watch->counts();
    still = c.active == 0 && c.generation == *quiet;
  }
  if (still || ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0) return true;
  free_if(seg_.waiters[index], abi::kWaiting);
  drop(index);
  return false;
}

bool NotifiedSleeps::take_epoll(int fd, uint64_t id, pid_t pid, pid_t tid, const __u64* a,
                                const std::optional<uint64_t>& quiet, TreeWatch* watch) {
  // epoll_wait / epoll_pwait: descriptor, events, maxevents, timeout in ms (> 0: the filter).
  const int epfd = static_cast<int>(a[0]);
  const int ms = static_cast<int>(a[3]);
  const int copy = pid == 0 ? -1 : copy_of(pid, epfd);
  const int64_t now = Session::read_clock(seg_.header.clock).ns();
  const int64_t timeout = static_cast<int64_t>(ms) * 1000000;
  const WaitSlack slack = wait_slack(seg_.header, abi::kReasonEpoll, timeout);
  const uint32_t index = copy < 0 ? kNoSlot
                                  : register_slot(pid, tid, now + timeout + slack.late_ns, slack.range_ns,
                                                  abi::kReasonEpoll, abi::kTracerAnyThread, false, 0);
  if (index == kNoSlot) {
    send(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);  // runs as it is, with its real timeout
    return false;
  }
  keep(index, Sleep{fd, id, seg_.waiters[index].seq.load(std::memory_order_relaxed), tid, true, true, copy, pid, a[1],
                    static_cast<int>(a[2])});
  if (!still_pending(fd, id, index, quiet, watch)) return false;
  // Ready already (events came before the call): take()'s look at the copies lets it run, and
  // so does the watcher, to which arming reports it.
  arm(static_cast<size_t>(copy));
  return true;
}

NotifiedSleeps::Answer NotifiedSleeps::answer(uint32_t index) {
  std::lock_guard<std::mutex> lock(mu_);
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
  Sleep& sl = sleeps_[index];
  sl.used = false;
  --in_flight_;
  if (sl.copy >= 0) {
    --copies_[static_cast<size_t>(sl.copy)].waits;
    --epoll_waits_;
  }
}

int NotifiedSleeps::copy_of(pid_t pid, int prog_fd) {
  size_t free_entry = copies_.size();
  for (size_t i = 0; i < copies_.size(); ++i) {
    Copy& c = copies_[i];
    if (c.fd >= 0 && c.pid == pid && c.prog_fd == prog_fd) {
      // Still the same open epoll: the program may have closed it and got the number back for
      // another one (a C library's epoll, opened and closed with its context).
      // (A kernel without kcmp, ENOSYS, cannot say: the copy is trusted as before.)
      const long same = syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, c.fd, prog_fd);
      if (same == 0 || (same < 0 && errno == ENOSYS)) return static_cast<int>(i);
      if (c.waits != 0) continue;  // waits of the old one still in flight: a new entry
      close_copy(c);
    }
    if (c.fd < 0) free_entry = std::min(free_entry, i);
  }
  if (copies_look_ < 0) {
    copies_look_ = epoll_create1(EPOLL_CLOEXEC);
    copies_watch_ = epoll_create1(EPOLL_CLOEXEC);
    stop_ = eventfd(0, EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = UINT64_MAX;
    if (copies_look_ < 0 || copies_watch_ < 0 || stop_ < 0 || epoll_ctl(copies_watch_, EPOLL_CTL_ADD, stop_, &ev) != 0) return -1;
    watcher_ = std::thread([this] { watch_copies(); });
  }
  if (copies_look_ < 0 || copies_watch_ < 0 || stop_ < 0) return -1;
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return -1;
  const int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, prog_fd, 0));
  close(pidfd);
  if (fd < 0) return -1;
  epoll_event look{};
  look.events = EPOLLIN;
  look.data.u64 = free_entry;
  epoll_event watch = look;
  watch.events = EPOLLONESHOT;  // disarmed: armed by each wait (arm), not woken by the program's own polls
  // Not an epoll descriptor (the filter lets any epoll_wait through): EINVAL here.
  if (epoll_ctl(copies_look_, EPOLL_CTL_ADD, fd, &look) != 0 || epoll_ctl(copies_watch_, EPOLL_CTL_ADD, fd, &watch) != 0) {
    close(fd);
    return -1;
  }
  if (free_entry == copies_.size()) copies_.emplace_back();
  copies_[free_entry] = Copy{pid, prog_fd, fd, 0};
  return static_cast<int>(free_entry);
}

bool NotifiedSleeps::release_copy(size_t i, int* waking) {
  // Events first, without taking them (a poll of an epoll descriptor checks its ready list): the
  // watcher's report may be stale, its events taken since by another thread of the program (a Go
  // thread's non-blocking netpoll). A real epoll_wait stays blocked then, and so do the waits.
  // Answering them EINTR instead woke Go's poller whenever the watcher got a cpu, after an idle
  // decision the tree's activity had already allowed: the broker then moved the clock while the
  // poller ran, which found its timers due by itself, so no timer fired for the broker and the
  // tick at that instant was never sent (equivalence.go_replay_patch in CI; go_fcfs recordings
  // differed in a few timer records per run). A wait whose events another thread takes between
  // this look and the claim below still gets EINTR; that thread is active meanwhile, and take()
  // waits for mu_, so no idle decision falls in between.
  pollfd ready{copies_[i].fd, POLLIN, 0};
  if (poll(&ready, 1, 0) == 0) {
    arm(i);  // the watcher hears of the next events
    return false;
  }
  bool released = false;
  for (uint32_t index = 0; index < sleeps_.size() && copies_[i].waits != 0; ++index) {
    Sleep& sl = sleeps_[index];
    if (!sl.used || sl.copy != static_cast<int>(i) || !sl.pending) continue;
    auto& s = seg_.waiters[index];
    if (s.tid.load(std::memory_order_acquire) != sl.tid || s.seq.load(std::memory_order_acquire) != sl.seq) continue;
    // Marked before the claim (abi::kTracerAnswering): a signal may end the wait meanwhile, and
    // the tracer, which ends the slot first, must find a slot it could not end marked as ours
    // (tracer/notify_sleeps.cpp, note_signal_in_notify_sleep), else the events taken below are lost.
    s.tracer_flags.fetch_or(abi::kTracerAnswering, std::memory_order_seq_cst);
    uint32_t waiting = abi::kWaiting;
    if (!s.state.compare_exchange_strong(waiting, abi::kClaimed, std::memory_order_acq_rel)) {
      s.tracer_flags.fetch_and(~abi::kTracerAnswering, std::memory_order_seq_cst);
      // The controller's advance is looking at it (only its own thread makes a slot Waking, and
      // it answers a due wait under mu_): the watcher tries again once that is settled.
      if (waiting == abi::kWaking && waking) *waking = static_cast<int>(index);
      continue;
    }
    // The call's own work, on the same open epoll: its events (those its set holds now, as the
    // kernel would give them), written where the call asked for them. Letting the call run
    // instead (SECCOMP_USER_NOTIF_FLAG_CONTINUE) would make it wait with its real timeout if
    // another thread took the events first (Go polls without blocking after a stop-the-world).
    epoll_event got[128];
    const int n = epoll_wait(copies_[i].fd, got, std::clamp(sl.maxevents, 1, 128), 0);
    const bool written = n > 0 && write_mem(sl.pid, sl.tid, sl.events, got, sizeof(epoll_event) * static_cast<size_t>(n));
    if (written) {
      s.deadline.store(n, std::memory_order_relaxed);
      s.tracer_flags.fetch_or(abi::kTracerAnswered, std::memory_order_seq_cst);
    }
    s.tracer_flags.fetch_and(~abi::kTracerAnswering, std::memory_order_seq_cst);
    // None left (taken meanwhile): EINTR, after which Go's poller works out its timeout anew.
    if (written ? send(sl.fd, sl.id, n, 0, 0) : send(sl.fd, sl.id, 0, n > 0 ? -EFAULT : -EINTR, 0)) ++answered_;
    VTIME_LOGF("controller", LogLevel::kDebug, "tid %d: its epoll descriptor is ready, %d events (slot %u)",
               static_cast<int>(sl.tid), n, index);
    if (written) {
      sl.pending = false;
      sl.answered = true;  // kept, Claimed: freed at the thread's next notification
      --copies_[i].waits;
      --epoll_waits_;
      sl.copy = -1;
    } else {
      free_slot(s);
      drop(index);
    }
    released = true;
  }
  return released;
}

void NotifiedSleeps::arm(size_t i) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u64 = i;
  epoll_ctl(copies_watch_, EPOLL_CTL_MOD, copies_[i].fd, &ev);
}

bool NotifiedSleeps::release_ready() {
  bool released = false;
  epoll_event ev[16];
  const int n = epoll_wait(copies_look_, ev, 16, 0);
  for (int k = 0; k < n; ++k) {
    const size_t i = static_cast<size_t>(ev[k].data.u64);
    if (i < copies_.size() && copies_[i].waits != 0) released = release_copy(i, nullptr) || released;
  }
  return released;
}

void NotifiedSleeps::watch_copies() {
  for (;;) {
    epoll_event ev[16];
    const int n = epoll_wait(copies_watch_, ev, 16, -1);
    if (n < 0 && errno != EINTR) return;
    bool released = false;
    for (bool again = true; again;) {
      again = false;
      int waking = -1;
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (int k = 0; k < n; ++k) {
          if (ev[k].data.u64 == UINT64_MAX) return;  // the destructor's
          const size_t i = static_cast<size_t>(ev[k].data.u64);
          if (i < copies_.size() && copies_[i].waits != 0) released = release_copy(i, &waking) || released;
        }
      }
      // A wait the controller was deciding on: due (it answers it) or not (it runs now).
      if (waking >= 0) again = settle_waking(seg_.waiters[waking]) == abi::kWaiting;
    }
    // Whatever the controller waits for, the released thread now runs.
    if (released) notify_activity(seg_);
  }
}

void NotifiedSleeps::close_copies(bool all) {
  for (Copy& c : copies_) {
    if (c.fd >= 0 && (all || c.waits == 0)) close_copy(c);
  }
}

void NotifiedSleeps::close_copy(Copy& c) {
  if (copies_look_ >= 0) epoll_ctl(copies_look_, EPOLL_CTL_DEL, c.fd, nullptr);
  if (copies_watch_ >= 0) epoll_ctl(copies_watch_, EPOLL_CTL_DEL, c.fd, nullptr);
  close(c.fd);
  c = Copy{};
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
    // An answered epoll wait keeps its mark until the thread's next notification (take_one), or
    // until the tracer used it.
    if (ours && sl.answered && (s.tracer_flags.load(std::memory_order_acquire) & abi::kTracerAnswered) != 0) continue;
    if (ours && st == abi::kClaimed) free_slot(s);  // the tracer ended it (a handler ran)
    drop(i);
  }
}

void NotifiedSleeps::threads_exited() {
  std::lock_guard<std::mutex> lock(mu_);
  process_of_.clear();
  // A copy names a process by pid and descriptor number, both of which may come back as others.
  close_copies(false);
  // The marks of answered epoll waits whose thread is gone.
  for (uint32_t i = 0; i < sleeps_.size(); ++i) {
    const Sleep& sl = sleeps_[i];
    if (!sl.used || !sl.answered || syscall(SYS_tgkill, sl.pid, sl.tid, 0) == 0) continue;
    auto& s = seg_.waiters[i];
    if (s.tid.load() == sl.tid && s.seq.load() == sl.seq && s.state.load(std::memory_order_acquire) == abi::kClaimed) free_slot(s);
    drop(i);
  }
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
