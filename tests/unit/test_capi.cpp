// vtime/vtime.h: with no session every function behaves like libc (the rewritten programs'
// guarantee); inside a session the clocks read virtual time.
#include <vtime/controller.h>
#include <vtime/vtime.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

TEST(CApiWithoutSession, BehavesLikeLibc) {
  ASSERT_EQ(getenv("VTIME_SESSION"), nullptr);
  EXPECT_EQ(vtime_active(), 0);
  timespec a{}, b{};
  ASSERT_EQ(vtime_clock_gettime(CLOCK_REALTIME, &a), 0);
  ASSERT_EQ(clock_gettime(CLOCK_REALTIME, &b), 0);
  EXPECT_LE(std::abs(b.tv_sec - a.tv_sec), 1);
  EXPECT_LE(std::abs(vtime_time(nullptr) - time(nullptr)), 1);
  auto t0 = std::chrono::steady_clock::now();
  timespec req{0, 20000000};
  EXPECT_EQ(vtime_nanosleep(&req, nullptr), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
  timespec bad{0, 2000000000};
  EXPECT_EQ(vtime_nanosleep(&bad, nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(vtime_poll(nullptr, 0, 0), 0);
  EXPECT_EQ(vtime_syscall(SYS_getpid), getpid());
}

TEST(CApiInSession, ClocksAreVirtualAndSleepsJump) {
  vtime::Session s = vtime::Session::create({.epoch_ns = 1'000'000'000'000'000'000LL, .mono_origin_ns = 5'000'000'000LL});
  pid_t child = fork();
  if (child == 0) {
    setenv(vtime::kSessionEnv, s.attach_spec().c_str(), 1);
    timespec rt{}, mono{};
    vtime_clock_gettime(CLOCK_REALTIME, &rt);
    vtime_clock_gettime(CLOCK_MONOTONIC, &mono);
    if (rt.tv_sec != 1'000'000'000 || rt.tv_nsec != 0) _exit(10);
    if (mono.tv_sec != 5 || mono.tv_nsec != 0) _exit(11);
    if (vtime_sleep(86400) != 0) _exit(12);
    if (vtime_time(nullptr) != 1'000'000'000 + 86400) _exit(13);
    timeval tv{};
    vtime_gettimeofday(&tv, nullptr);
    if (tv.tv_sec != 1'000'086'400 || tv.tv_usec != 0) _exit(14);
    _exit(vtime_active() == 1 ? 0 : 15);
  }
  vtime::Controller ctl(s, child);
  ctl.wait_idle(nullptr);
  auto next = ctl.next_deadline();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, vtime::TimePoint::origin() + vtime::seconds(86400));
  ctl.advance_to(*next);
  int status;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
