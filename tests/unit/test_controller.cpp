// vtime/controller.h: idle detection, deadline order, advance counts, reports, reclaiming.
// The controller drives real child processes that wait through libvtime's C API.
#include <vtime/controller.h>
#include <vtime/abi.h>
#include <vtime/vtime.h>
#include <vtime/tree_watch.h>

#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/slots.h>
#include <vtime/internal/trace_request.h>

#include <gtest/gtest.h>

#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace vtime;

namespace {

// The kernel count, where it loads (this binary is also run with VTIME_IDLE=proc: every case
// then checks the /proc rule). One per process: every child below is one of its roots.
TreeWatch* test_watch() {
  static std::unique_ptr<TreeWatch> watch = TreeWatch::open();
  return watch.get();
}

// Forks a child attached to `session` that runs `body` and exits with its return value.
pid_t spawn(Session& session, const std::function<int()>& body) {
  if (TreeWatch* w = test_watch()) w->adopt_next_fork();
  pid_t pid = fork();
  if (pid == 0) {
    setenv(kSessionEnv, session.attach_spec().c_str(), 1);
    _exit(body());
  }
  return pid;
}

struct DriveResult {
  int status = -1;
  int advances = 0;
  std::vector<TimePoint> times;
};

// The loop of `vtime exec`: advance to each deadline while the child lives.
DriveResult drive(Session& s, pid_t child) {
  Controller ctl(s, child, test_watch());
  DriveResult run;
  bool done = false;
  auto exited = [&] {
    if (!done && waitpid(child, &run.status, WNOHANG) == child) done = true;
    return done;
  };
  while (!exited()) {
    ctl.wait_idle(exited);
    if (exited()) break;
    auto next = ctl.next_deadline();
    if (!next) {
      kill(child, SIGKILL);
      waitpid(child, &run.status, 0);
      ADD_FAILURE() << "blocked forever";
      break;
    }
    ctl.advance_to(*next);
    run.times.push_back(*next);
    ++run.advances;
  }
  // Every decision used the rule this run is about: the kernel count where it loads (a watch
  // that lost its tree, or a registered process it did not recognise, would have fallen back).
  EXPECT_EQ(ctl.stats().kernel_count, test_watch() != nullptr);
  return run;
}

void sleep_virtual(int64_t secs) {
  timespec ts{static_cast<time_t>(secs), 0};
  vtime_nanosleep(&ts, nullptr);
}

int64_t mono_real_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t mono_ns() {
  timespec ts;
  vtime_clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

TEST(Controller, WakesThreadsInDeadlineOrderAtExactDeadlines) {
  Session s = Session::create();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = spawn(s, [&] {
    int64_t t0 = mono_ns();
    std::vector<std::thread> threads;
    for (int64_t d : {50, 10, 40, 20, 30}) {
      threads.emplace_back([=] {
        sleep_virtual(d);
        int64_t got = (mono_ns() - t0) / 1000000000LL;
        if (write(fds[1], &got, sizeof got) != sizeof got) _exit(3);
      });
    }
    for (auto& t : threads) t.join();
    return 0;
  });
  close(fds[1]);
  DriveResult run = drive(s, child);
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  std::vector<int64_t> order;
  int64_t v;
  while (read(fds[0], &v, sizeof v) == sizeof v) order.push_back(v);
  close(fds[0]);
  EXPECT_EQ(order, (std::vector<int64_t>{10, 20, 30, 40, 50}));
  EXPECT_EQ(run.advances, 5);
  EXPECT_EQ(s.now(), TimePoint::origin() + seconds(50));
}

TEST(Controller, NextDeadlineIsEmptyWithoutTimedWaits) {
  Session s = Session::create();
  Controller ctl(s, getpid());
  EXPECT_FALSE(ctl.next_deadline().has_value());
  EXPECT_EQ(ctl.advance_to(TimePoint::origin() + seconds(5)), 0);
  EXPECT_EQ(s.now(), TimePoint::origin() + seconds(5));
  // Never backwards.
  ctl.advance_to(TimePoint::origin() + seconds(1));
  EXPECT_EQ(s.now(), TimePoint::origin() + seconds(5));
}

TEST(Controller, AdvanceWakesEverySlotDueAndCountsThem) {
  Session s = Session::create();
  pid_t child = spawn(s, [] {
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i) threads.emplace_back([] { sleep_virtual(7); });
    for (auto& t : threads) t.join();
    return 0;
  });
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(7));
  EXPECT_EQ(ctl.advance_to(TimePoint::origin() + seconds(7)), 6);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(ctl.stats().wakeups, 6u);
}

TEST(Controller, DescribesWhatEachThreadWaitsOn) {
  Session s = Session::create();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = spawn(s, [&] {
    std::thread sleeper([] { sleep_virtual(3600); });
    char c;
    ssize_t r = read(fds[0], &c, 1);  // blocks: nobody writes until the test says so
    sleeper.join();
    return r == 1 ? 0 : 1;
  });
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  auto threads = ctl.describe();
  // Two threads of ours (a sanitizer runtime may add its own background thread).
  ASSERT_GE(threads.size(), 2u);
  bool saw_sleep = false, saw_read = false;
  for (auto& t : threads) {
    EXPECT_EQ(t.pid, child);
    if (t.waits_on.find("sleep until virtual 3600.000000000 s") != std::string::npos) saw_sleep = true;
    if (t.waits_on.find("read") != std::string::npos) saw_read = true;
  }
  EXPECT_TRUE(saw_sleep);
  EXPECT_TRUE(saw_read);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  ctl.wait_idle(nullptr);
  ctl.advance_to(*ctl.next_deadline());
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

namespace {

// A sleep the tracer made direct (vtime::abi::kTracerDirect, tracer/timed_call.h), armed as the tracer
// arms it but by the thread itself: a kWakeTracer slot of no process slot, then the rewritten
// call, a futex wait on the slot's word with its seq's bit, carrying the tag. With `block_fd` >= 0 the thread blocks
// in a read of it instead, as a thread not queued on its word at the deadline would be.
int direct_sleep(vtime::abi::Segment& seg, int64_t deadline_ns, int block_fd) {
  const uint32_t i = detail::claim_waiter_slot(seg, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), vtime::abi::kNoProcess, false);
  if (i == detail::kNoSlot) return 2;
  auto& w = seg.waiters[i];
  const uint64_t seq = seg.header.next_seq.fetch_add(1);
  w.deadline.store(deadline_ns);
  w.reason.store(vtime::abi::kReasonSleep);
  w.wake_kind.store(vtime::abi::kWakeTracer);
  w.seq.store(seq);
  w.tracer_flags.store(vtime::abi::kTracerDirect);
  const uint32_t value = w.word.load();
  w.state.store(vtime::abi::kWaiting);
  if (block_fd >= 0) {
    char c;
    return read(block_fd, &c, 1) == 1 ? 0 : 3;
  }
  timespec forever{static_cast<time_t>(1) << 40, 0};
  long r = syscall(SYS_futex, &w.word, FUTEX_WAIT_BITSET, value, &forever, vtime::abi::kTaggedWaitMark | seq,
                   vtime::abi::direct_bit(seq));
  return r == 0 ? 0 : 10 + errno;
}

vtime::abi::WaiterSlot* slot_of(vtime::abi::Segment& seg, pid_t pid) {
  for (auto& w : seg.waiters) {
    if (w.pid.load() == pid && w.state.load() != vtime::abi::kFree) return &w;
  }
  return nullptr;
}

}  // namespace

TEST(Controller, DirectSleepIsWokenOnItsWordWithTheKernelCountElseLeftToTheTracer) {
  Session s = Session::create();
  vtime::abi::Segment& seg = s.segment();
  pid_t child = spawn(s, [&] { return direct_sleep(seg, 3'000'000'000, -1); });
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(3));
  vtime::abi::WaiterSlot* w = slot_of(seg, child);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(ctl.advance_to(TimePoint::origin() + seconds(3)), 1);
  if (test_watch() != nullptr) {
    // Woken on its word, the wait ended by the controller: the call returns 0, as the sleep would.
    EXPECT_EQ(w->state.load(), vtime::abi::kClaimed);
  } else {
    // The /proc rule needs the Woken slot until the tracer took the wake-up: the tracer's turn,
    // which this test takes itself.
    EXPECT_EQ(w->state.load(), vtime::abi::kWoken);
    EXPECT_EQ(w->tracer_flags.load() & vtime::abi::kTracerDirect, 0u);
    detail::futex_wake(&w->word);
  }
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit " << WEXITSTATUS(status);
}

TEST(Controller, DirectSleepWhoseThreadIsNotQueuedIsLeftToTheTracer) {
  Session s = Session::create();
  vtime::abi::Segment& seg = s.segment();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = spawn(s, [&] { return direct_sleep(seg, 3'000'000'000, fds[0]); });
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(3));
  EXPECT_EQ(ctl.advance_to(TimePoint::origin() + seconds(3)), 1);
  vtime::abi::WaiterSlot* w = slot_of(seg, child);
  ASSERT_NE(w, nullptr);
  // FUTEX_WAKE found no one: the tracer interrupts the call as any of its waits.
  EXPECT_EQ(w->state.load(), vtime::abi::kWoken);
  EXPECT_EQ(w->tracer_flags.load() & vtime::abi::kTracerDirect, 0u);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// An advance that does not wait for the tree to be idle (the timeout policy, a running clock)
// races the waits' owners: between the advance's look at the table and its wake-up, an owner may
// end a due wait by itself and arm the next one, not due, on the same slot. That one must never be
// seen woken (the controller marks a slot abi::kWaking, checks it still holds the due wait, and
// only then makes it Woken). The owner here is a thread of this process working a slot as the
// shim's waits do; it counts the waits it sees Woken before their deadline.
TEST(Controller, NonIdleAdvanceNeverWakesAWaitArmedAfterItLooked) {
  Session s = Session::create();
  vtime::abi::Segment& seg = s.segment();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = spawn(s, [&] {
    char c;
    return read(fds[0], &c, 1) == 1 ? 0 : 3;
  });
  Controller ctl(s, child, test_watch());
  const uint32_t i = detail::claim_waiter_slot(seg, child, child, vtime::abi::kNoProcess, false);
  ASSERT_NE(i, detail::kNoSlot);
  auto& w = seg.waiters[i];
  const int64_t due_ns = 1'000'000'000, later_ns = 100'000'000'000;
  std::atomic<bool> stop{false};
  std::atomic<long> early{0}, rounds{0}, spin{0};
  std::thread owner([&] {
    auto arm = [&](int64_t deadline) {
      w.deadline.store(deadline, std::memory_order_relaxed);
      w.wake_kind.store(vtime::abi::kWakeFutex, std::memory_order_relaxed);
      w.seq.store(seg.header.next_seq.fetch_add(1), std::memory_order_relaxed);
      w.state.store(vtime::abi::kWaiting, std::memory_order_release);
    };
    while (!stop.load(std::memory_order_relaxed)) {
      arm(due_ns);
      // Found due by the advance's look, with luck: the owner's pace varies, so that its switch to
      // the next wait sometimes falls between that look and the wake-up.
      for (long k = 0, n = (rounds.load(std::memory_order_relaxed) * 7919) % 2000; k < n; ++k) spin.fetch_add(1);
      w.state.store(vtime::abi::kClaimed, std::memory_order_release);  // it ended by itself
      arm(later_ns);
      for (int k = 0; k < 20; ++k) {
        if (w.state.load(std::memory_order_acquire) == vtime::abi::kWoken) ++early;
      }
      w.state.store(vtime::abi::kClaimed, std::memory_order_release);
      ++rounds;
    }
  });
  const int64_t until = mono_real_ns() + 1'500'000'000;
  while (mono_real_ns() < until && early.load() == 0) ctl.advance_to(TimePoint::origin() + Duration::nanoseconds(due_ns));
  stop = true;
  owner.join();
  EXPECT_EQ(early.load(), 0) << "a wait due at 100 s was seen woken at 1 s (" << rounds.load() << " rounds)";
  EXPECT_GT(rounds.load(), 100);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

namespace {

// In a child: installs the notify filter (a Go image's with `go`) and publishes its listener
// where the tracer would, for the controller to adopt. False if the kernel refused the filter.
bool publish_notify_listener(vtime::abi::Segment& seg, bool go) {
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  uint16_t len = 0;
  const sock_filter* filter = detail::notify_filter(&len, go);
  sock_fprog prog{len, const_cast<sock_filter*>(filter)};
  long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (fd < 0) return false;
  auto& l = seg.header.notify_listeners[0];
  l.tracer_fd.store(static_cast<int32_t>(fd));
  l.pid.store(getpid());
  l.state.store(vtime::abi::kListenerHeld);
  return true;
}

}  // namespace

// A notified sleep (docs/tracer.md "Notified sleeps") without the tracer: the child installs the
// notify filter itself and publishes its listener where the tracer would (the header's tracer pid
// is the child's here). The controller takes the sleep (5 s) as a waiter slot; a stop and continue
// of the child ends the wait in the kernel, which restarts the call with its original 5 s: the
// controller keeps the first deadline (a new one would say 2 + 5 s, the clock having moved to 2 s
// meanwhile). Answered at 5 s, the call returns 0.
TEST(Controller, NotifiedSleepKeepsItsDeadlineWhenTheKernelRestartsIt) {
  if (!detail::notify_sleeps_supported()) GTEST_SKIP() << "no synchronous seccomp listener on this kernel";
  Session s = Session::create();
  vtime::abi::Segment& seg = s.segment();
  pid_t child = spawn(s, [&] {
    if (!publish_notify_listener(seg, false)) return 2;
    timespec d{5, 0};
    int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
    return r == 0 ? 0 : 10 + r;
  });
  seg.header.tracer_pid.store(child);
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(5));
  ctl.set_now(TimePoint::origin() + seconds(2));
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  int status;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  ASSERT_EQ(kill(child, SIGCONT), 0);
  ctl.wait_idle(nullptr);
  EXPECT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(5));
  int notify_slots = 0;
  for (auto& w : seg.waiters) {
    const uint32_t st = w.state.load();
    if ((st == vtime::abi::kWaiting || st == vtime::abi::kWoken) && (w.tracer_flags.load() & vtime::abi::kTracerNotify) != 0) {
      ++notify_slots;
    }
  }
  if (notify_slots != 1) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << notify_slots << " notified sleeps pending, expected the one restarted";
  }
  EXPECT_EQ(ctl.advance_to(TimePoint::origin() + seconds(5)), 1);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(ctl.stats().notified, 1u);
}

// A Go poller's timed epoll wait as a notified wait (docs/tracer.md), without the tracer or Go:
// the child installs a Go image's notify filter itself, publishes its listener, and waits in
// epoll_pwait for 10 s on an edge-triggered pipe, as Go's poller does. The controller takes it
// (deadline 10 s). Then the pipe gets a byte while the test calls nothing of the controller's:
// only its watcher thread can end the wait, with the event, at virtual 0 (the child reports it).
// The child's second wait, 3 s with nothing coming, returns 0 at its deadline.
TEST(Controller, NotifiedEpollWaitGetsItsEventAsSoonAsItsDescriptorIsReady) {
  if (!detail::notify_sleeps_supported()) GTEST_SKIP() << "no synchronous seccomp listener on this kernel";
  Session s = Session::create();
  vtime::abi::Segment& seg = s.segment();
  int data[2], report[2];
  ASSERT_EQ(pipe(data), 0);
  ASSERT_EQ(pipe(report), 0);
  pid_t child = spawn(s, [&] {
    int ep = epoll_create1(0);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    ev.data.u64 = 0x5eed;
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, data[0], &ev) != 0) return 2;
    if (!publish_notify_listener(seg, true)) return 3;
    epoll_event got[8]{};
    int n = static_cast<int>(syscall(SYS_epoll_pwait, ep, got, 8, 10000, nullptr, 8));
    char r = n == 1 && got[0].data.u64 == 0x5eed && (got[0].events & EPOLLIN) != 0 ? 'e' : 'x';
    if (write(report[1], &r, 1) != 1) return 4;
    n = static_cast<int>(syscall(SYS_epoll_pwait, ep, got, 8, 3000, nullptr, 8));
    return n == 0 ? 0 : 20 + n;
  });
  seg.header.tracer_pid.store(child);
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(10));
  ASSERT_EQ(write(data[1], "x", 1), 1);
  pollfd p{report[0], POLLIN, 0};
  char r = 0;
  const bool reported = poll(&p, 1, 10000) == 1 && read(report[0], &r, 1) == 1;
  int status;
  if (!reported) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "the ready descriptor did not end the wait (the controller was not looking)";
  }
  EXPECT_EQ(r, 'e') << "the wait did not return the pipe's event";
  ctl.wait_idle(nullptr);
  EXPECT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(3)) << "the second wait, from virtual 0";
  EXPECT_EQ(ctl.advance_to(TimePoint::origin() + seconds(3)), 1);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(ctl.stats().notified, 2u);
}

TEST(Controller, ReclaimsTheSlotsOfAKilledProcess) {
  Session s = Session::create();
  pid_t child = spawn(s, [] {
    sleep_virtual(1000);
    return 0;
  });
  Controller ctl(s, child, test_watch());
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(1000));
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  ctl.wait_idle(nullptr);
  EXPECT_FALSE(ctl.next_deadline().has_value()) << "a dead process's deadline must not hold the clock";
  // Killed from outside and reaped: not a reason to stop trusting the kernel count.
  EXPECT_EQ(ctl.stats().kernel_count, test_watch() != nullptr);
}

TEST(Controller, WaitIdleReturnsWhenInterrupted) {
  Session s = Session::create();
  pid_t child = spawn(s, [] {
    std::atomic<long> spin{0};
    for (;;) spin.fetch_add(1, std::memory_order_relaxed);
    return 0;
  });
  Controller ctl(s, child, test_watch());
  int calls = 0;
  EXPECT_EQ(ctl.wait_idle([&] { return ++calls > 20; }), IdleResult::kInterrupted);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

namespace {

int g_handler_pipe = -1;

// Runs for 100 ms of real time (the child is not under the shim: clock_gettime is the kernel's),
// then reports. While it runs the tree is not idle, even though the thread's sleep slot still
// says Waiting.
void busy_handler(int) {
  timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < 100000000LL);
  if (write(g_handler_pipe, "h", 1) != 1) _exit(4);
}

bool handler_ran(int fd) {
  char c = 0;
  return read(fd, &c, 1) == 1 && c == 'h';
}

// A child whose second thread (not the leader: the leader's own state is read on every scan)
// sleeps (virtual) with a SIGUSR1 handler that keeps it busy, and exits the child when its sleep
// ends with EINTR. The leader reports the sleeper's tid on `tid_fd`, then waits on `relay` (a
// call we do not intercept) and signals the sleeper when a byte arrives (relay_fd < 0: never).
pid_t spawn_signalled_sleeper(Session& s, int report_fd, int tid_fd, int relay_fd) {
  return spawn(s, [=] {
    g_handler_pipe = report_fd;
    struct sigaction sa {};
    sa.sa_handler = busy_handler;
    sigaction(SIGUSR1, &sa, nullptr);
    std::atomic<pid_t> tid{0};
    std::thread sleeper([&] {
      tid = static_cast<pid_t>(syscall(SYS_gettid));
      timespec ts{3600, 0};
      int r = vtime_nanosleep(&ts, nullptr);
      _exit(r == -1 && errno == EINTR ? 0 : 6);
    });
    while (tid.load() == 0) sched_yield();
    pid_t t = tid.load();
    if (write(tid_fd, &t, sizeof t) != sizeof t) _exit(5);
    char c;
    if (relay_fd >= 0 && read(relay_fd, &c, 1) == 1) pthread_kill(sleeper.native_handle(), SIGUSR1);
    for (;;) pause();
    return 0;
  });
}

// Waits for idleness (or the child's exit): the child's busy thread must have reported on
// `report_fd` by then, and the child must exit 0. Reaps the child.
void expect_busy_until_reported(Controller& ctl, pid_t child, int report_fd, const char* what) {
  bool exited = false;
  int status = 0;
  ctl.wait_idle([&] { return exited || (exited = waitpid(child, &status, WNOHANG) == child); });
  EXPECT_TRUE(handler_ran(report_fd)) << "idle declared while " << what;
  if (!exited) waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

pid_t read_tid(int fd) {
  pid_t t = 0;
  return read(fd, &t, sizeof t) == sizeof t ? t : 0;
}

}  // namespace

// A sleeper proven idle by the cheap path (its syscall line only) must stop counting as idle as
// soon as a signal wakes it, and until its handler is done.
TEST(Controller, SleeperInterruptedBySignalIsBusyUntilItsHandlerEnds) {
  Session s = Session::create();
  int report[2];
  int tids[2];
  ASSERT_EQ(pipe2(report, O_NONBLOCK), 0);
  ASSERT_EQ(pipe(tids), 0);
  pid_t child = spawn_signalled_sleeper(s, report[1], tids[1], -1);
  pid_t sleeper = read_tid(tids[0]);
  ASSERT_GT(sleeper, 0);
  Controller ctl(s, child, test_watch());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(ctl.wait_idle(nullptr), IdleResult::kIdle);  // proofs made and reused
  EXPECT_FALSE(handler_ran(report[0]));
  syscall(SYS_tgkill, child, sleeper, SIGUSR1);
  expect_busy_until_reported(ctl, child, report[0], "the signal handler was still running");
  for (int fd : {report[0], report[1], tids[0], tids[1]}) close(fd);
}

// The same through the tree: a thread blocked in a call we do not intercept is released, signals
// the proven sleeper and blocks again (pause) before the controller looks.
TEST(Controller, SleeperSignalledByAnotherThreadOfTheTreeIsBusyUntilItsHandlerEnds) {
  Session s = Session::create();
  int report[2], relay[2], tids[2];
  ASSERT_EQ(pipe2(report, O_NONBLOCK), 0);
  ASSERT_EQ(pipe(relay), 0);
  ASSERT_EQ(pipe(tids), 0);
  pid_t child = spawn_signalled_sleeper(s, report[1], tids[1], relay[0]);
  ASSERT_GT(read_tid(tids[0]), 0);
  Controller ctl(s, child, test_watch());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(ctl.wait_idle(nullptr), IdleResult::kIdle);
  ASSERT_EQ(write(relay[1], "x", 1), 1);
  usleep(20000);  // let the relay run and block again: the controller must still see the handler
  expect_busy_until_reported(ctl, child, report[0], "the signal handler was still running");
  for (int fd : {report[0], report[1], relay[0], relay[1], tids[0], tids[1]}) close(fd);
}

namespace {

// A child whose second thread waits for a byte on `in_fd` through an intercepted untimed fd wait
// (poll, or epoll_wait on an epoll set holding in_fd), then works for 100 ms of real time and
// reports on `report_fd`. The leader reports the waiter's tid on `tid_fd` and pauses.
pid_t spawn_fd_waiter(Session& s, int report_fd, int tid_fd, int in_fd, bool use_epoll) {
  return spawn(s, [=] {
    g_handler_pipe = report_fd;
    std::atomic<pid_t> tid{0};
    std::thread waiter([&] {
      tid = static_cast<pid_t>(syscall(SYS_gettid));
      int r;
      if (use_epoll) {
        int ep = epoll_create1(0);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = in_fd;
        epoll_ctl(ep, EPOLL_CTL_ADD, in_fd, &ev);
        epoll_event out{};
        r = vtime_epoll_wait(ep, &out, 1, -1);
      } else {
        pollfd p{in_fd, POLLIN, 0};
        r = vtime_poll(&p, 1, -1);
      }
      if (r != 1) _exit(6);
      busy_handler(0);  // 100 ms of real work, then the report
      _exit(0);
    });
    while (tid.load() == 0) sched_yield();
    pid_t t = tid.load();
    if (write(tid_fd, &t, sizeof t) != sizeof t) _exit(5);
    for (;;) pause();
    return 0;
  });
}

// The thread's /proc syscall line as numbers: nr, six arguments (empty when running).
std::vector<unsigned long long> syscall_fields(pid_t pid, pid_t tid) {
  char path[96], buf[256] = {};
  snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, tid);
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  std::vector<unsigned long long> out;
  if (n <= 0 || strncmp(buf, "running", 7) == 0) return out;
  char* p = buf;
  out.push_back(strtoull(p, &p, 10));
  for (int i = 0; i < 6; ++i) out.push_back(strtoull(p, &p, 16));
  return out;
}

void fd_waiter_case(bool use_epoll) {
  Session s = Session::create();
  int report[2], in[2], tids[2];
  ASSERT_EQ(pipe2(report, O_NONBLOCK), 0);
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(tids), 0);
  pid_t child = spawn_fd_waiter(s, report[1], tids[1], in[0], use_epoll);
  pid_t waiter = read_tid(tids[0]);
  ASSERT_GT(waiter, 0);
  // Whatever fails below, the child must not outlive the test.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0 && kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  Controller ctl(s, child, test_watch());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(ctl.wait_idle(nullptr), IdleResult::kIdle);  // proofs made and reused

  // The real call is tagged with the wait slot's seq (what lets one read prove it blocked).
  bool found = false;
  uint64_t seq = 0;
  for (auto& w : s.segment().waiters) {
    if (w.state.load() == vtime::abi::kWaiting && w.tid.load() == waiter) {
      found = true;
      seq = w.seq.load();
    }
  }
  ASSERT_TRUE(found) << "the waiter has no slot";
  auto f = syscall_fields(child, waiter);
  ASSERT_EQ(f.size(), 7u);
  if (use_epoll) {
    EXPECT_EQ(f[0], static_cast<unsigned long long>(SYS_epoll_pwait));
    EXPECT_EQ(f[5], 0u);
    EXPECT_EQ(f[6], vtime::abi::kTaggedWaitMark | seq);
  } else {
    EXPECT_EQ(f[0], static_cast<unsigned long long>(SYS_ppoll));
    EXPECT_EQ(f[4], 0u);
    EXPECT_EQ(f[5], vtime::abi::kTaggedWaitMark | seq);
  }

  // Data from outside the tree: the waiter is busy from then on until its work is done.
  EXPECT_FALSE(handler_ran(report[0]));
  ASSERT_EQ(write(in[1], "x", 1), 1);
  expect_busy_until_reported(ctl, child, report[0], "the woken fd waiter was still working");
  reaper.pid = 0;  // reaped by the helper
  for (int fd : {report[0], report[1], in[0], in[1], tids[0], tids[1]}) close(fd);
}

}  // namespace

// A thread in an untimed poll is proven idle by one read of its tagged syscall line; data that
// wakes it makes the tree busy until it blocks again (here: until it exits).
TEST(Controller, TaggedPollWaiterIsBusyOnceWokenByData) { fd_waiter_case(false); }
TEST(Controller, TaggedEpollWaiterIsBusyOnceWokenByData) { fd_waiter_case(true); }

// advance_step wakes, of the waiters due at the earliest deadline, those of one process (the
// lowest pid) only: processes due at one instant run one after another.
TEST(Controller, AdvanceStepWakesOneProcessAtATimeInPidOrder) {
  Session s = Session::create();
  int fds[2], kid_fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(pipe(kid_fds), 0);
  // One root forking three processes (all in the tree under either rule), each with two threads
  // sleeping until 5 s; each reports its pid when its sleeps are over.
  pid_t root = spawn(s, [&] {
    std::vector<pid_t> kids;
    for (int k = 0; k < 3; ++k) {
      pid_t kid = fork();
      if (kid == 0) {
        std::vector<std::thread> threads;
        for (int i = 0; i < 2; ++i) threads.emplace_back([] { sleep_virtual(5); });
        for (auto& t : threads) t.join();
        pid_t me = getpid();
        _exit(write(fds[1], &me, sizeof me) == sizeof me ? 0 : 3);
      }
      kids.push_back(kid);
      if (write(kid_fds[1], &kid, sizeof kid) != sizeof kid) return 4;
    }
    int bad = 0;
    for (pid_t k : kids) {
      int st = 0;
      waitpid(k, &st, 0);
      bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return bad;
  });
  close(fds[1]);
  close(kid_fds[1]);
  std::vector<pid_t> kids(3);
  for (auto& k : kids) ASSERT_EQ(read(kid_fds[0], &k, sizeof k), static_cast<ssize_t>(sizeof k));
  close(kid_fds[0]);
  Controller ctl(s, root, test_watch());
  std::vector<pid_t> order;
  for (int step = 0; step < 3; ++step) {
    ASSERT_EQ(ctl.wait_idle(nullptr), IdleResult::kIdle);
    auto next = ctl.next_deadline();
    ASSERT_EQ(next, TimePoint::origin() + seconds(5));
    EXPECT_EQ(ctl.advance_step(*next), 2) << "one process's two sleepers per step";
    pid_t who = 0;
    ASSERT_EQ(read(fds[0], &who, sizeof who), static_cast<ssize_t>(sizeof who));
    order.push_back(who);
  }
  close(fds[0]);
  std::sort(kids.begin(), kids.end());
  EXPECT_EQ(order, kids);
  EXPECT_EQ(ctl.stats().kernel_count, test_watch() != nullptr) << "three registered processes of the tree";
  int st = 0;
  waitpid(root, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

// The running clock (Controller::set_rate; --cpu-model real): read from the CPU's counter where
// the kernel trusts it, from CLOCK_MONOTONIC otherwise (the vdso. cases run with VTIME_TSC=0).
namespace {

// The virtual clock and the real one read together: retried until both reads of the real clock
// lie within 50 us (a preemption between them would blur the pair).
std::pair<int64_t, int64_t> clock_pair(const Session& s) {
  for (;;) {
    int64_t a = real_monotonic_ns();
    int64_t v = s.now().ns();
    int64_t b = real_monotonic_ns();
    if (b - a < 50'000) return {v, a + (b - a) / 2};
  }
}

double rate_over(const Session& s, int64_t real_ns) {
  auto [v1, r1] = clock_pair(s);
  usleep(static_cast<useconds_t>(real_ns / 1000));
  auto [v2, r2] = clock_pair(s);
  return static_cast<double>(v2 - v1) / static_cast<double>(r2 - r1);
}

}  // namespace

TEST(RunningClock, RunsAtItsRateAndStopsWhereItStands) {
  Session s = Session::create();
  Controller ctl(s, getpid());
  ctl.set_rate(1.0);  // may come before the counter's calibration has a millisecond ...
  EXPECT_NEAR(rate_over(s, 20'000'000), 1.0, 0.05);
  ctl.set_rate(1.0);  // ... this write has it
  if (getenv("VTIME_TSC") == nullptr) {
    // Where the kernel's clocksource is the counter, vtime reads it (abi::ClockState).
    std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string source;
    cs >> source;
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string flags;
    while (std::getline(cpuinfo, flags) && flags.rfind("flags", 0) != 0) {
    }
    bool invariant = flags.find(" constant_tsc") != std::string::npos && flags.find(" nonstop_tsc") != std::string::npos;
    if (source == "tsc" && invariant) {
      EXPECT_NE(s.segment().header.clock.tsc_mult.load(), 0u) << "the counter is not used";
    }
  } else {
    EXPECT_EQ(s.segment().header.clock.tsc_mult.load(), 0u) << "VTIME_TSC=0 did not turn the counter off";
  }
  EXPECT_NEAR(rate_over(s, 100'000'000), 1.0, 0.02);
  ctl.set_rate(3.0);
  EXPECT_NEAR(rate_over(s, 50'000'000), 3.0, 0.06);
  ctl.set_rate(0);
  TimePoint stopped = s.now();
  usleep(2000);
  EXPECT_EQ(s.now(), stopped);
  // advance_to moves a stopped clock exactly, and a running one from where it stands.
  ctl.advance_to(stopped + seconds(10));
  EXPECT_EQ(s.now(), stopped + seconds(10));
}

TEST(RunningClock, NeverGoesBackWhenItStopsStartsOrChangesRate) {
  Session s = Session::create();
  Controller ctl(s, getpid());
  std::atomic<bool> stop{false};
  std::atomic<long> backwards{0}, reads{0};
  std::thread reader([&] {
    int64_t last = s.now().ns();
    while (!stop.load(std::memory_order_relaxed)) {
      int64_t t = s.now().ns();
      if (t < last) backwards.fetch_add(1);
      last = t;
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // The writer goes on until the reader has overlapped it for 3,000 reads too: on a loaded
  // 2-core machine the reader may not be scheduled at all during 3,000 quick writes (CI saw 574
  // reads), and a test whose reader never ran proves nothing. Bounded, so a reader that never runs
  // fails below instead of hanging.
  for (long i = 0; i < 3000 || (reads.load() <= 3000 && i < 30'000'000); ++i) {
    ctl.set_rate(1.0);
    std::this_thread::yield();
    ctl.set_rate(0);
    if (i % 3 == 0) ctl.set_rate(5.0);
    if (i % 7 == 0) ctl.set_now(s.now() + nanoseconds(1));
  }
  stop = true;
  reader.join();
  EXPECT_EQ(backwards.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 3000);
}
