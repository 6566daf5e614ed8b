// vtime/controller.h: idle detection, deadline order, advance counts, reports, reclaiming.
// The controller drives real child processes that wait through libvtime's C API.
#include <vtime/controller.h>
#include <vtime/vtime.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace vtime;

namespace {

// Forks a child attached to `session` that runs `body` and exits with its return value.
pid_t spawn(Session& session, const std::function<int()>& body) {
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
  Controller ctl(s, child);
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
  return run;
}

void sleep_virtual(int64_t secs) {
  timespec ts{static_cast<time_t>(secs), 0};
  vtime_nanosleep(&ts, nullptr);
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
  Controller ctl(s, child);
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
  Controller ctl(s, child);
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

TEST(Controller, ReclaimsTheSlotsOfAKilledProcess) {
  Session s = Session::create();
  pid_t child = spawn(s, [] {
    sleep_virtual(1000);
    return 0;
  });
  Controller ctl(s, child);
  ctl.wait_idle(nullptr);
  ASSERT_EQ(ctl.next_deadline(), TimePoint::origin() + seconds(1000));
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  ctl.wait_idle(nullptr);
  EXPECT_FALSE(ctl.next_deadline().has_value()) << "a dead process's deadline must not hold the clock";
}

TEST(Controller, WaitIdleReturnsWhenInterrupted) {
  Session s = Session::create();
  pid_t child = spawn(s, [] {
    std::atomic<long> spin{0};
    for (;;) spin.fetch_add(1, std::memory_order_relaxed);
    return 0;
  });
  Controller ctl(s, child);
  int calls = 0;
  EXPECT_EQ(ctl.wait_idle([&] { return ++calls > 20; }), IdleResult::kInterrupted);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}
