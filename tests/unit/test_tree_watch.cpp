// vtime/tree_watch.h: the kernel's count of the tree's active threads, on real processes.
// Skipped where the program cannot be loaded (not root, no BTF, VTIME_IDLE=proc): the controller
// then uses the /proc rule, which test_controller checks on its own.
#include <vtime/tree_watch.h>

#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace vtime;

namespace {

std::unique_ptr<TreeWatch> open_or_skip(std::string* why) {
  auto w = TreeWatch::open(why);
  return w;
}

#define OPEN_WATCH(w)                                        \
  std::string why_not;                                       \
  auto w = open_or_skip(&why_not);                           \
  if (!w) GTEST_SKIP() << "kernel count unavailable: " << why_not

// fork(), with the child killed when its parent dies: no test leaves a process behind.
pid_t fork_tied() {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
  }
  return pid;
}

// Forks a child of the watch's tree running `body`.
pid_t adopt(TreeWatch& w, const std::function<void()>& body) {
  w.adopt_next_fork();
  pid_t pid = fork_tied();
  if (pid == 0) {
    body();
    _exit(0);
  }
  return pid;
}

// Threads of process `pid` (its /proc status), 0 if it is gone.
int thread_count(pid_t pid) {
  FILE* f = fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "re");
  if (!f) return 0;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
  }
  fclose(f);
  return n;
}

// The first child of process `pid` (its main thread's children list), 0 if none.
pid_t first_child(pid_t pid) {
  FILE* f = fopen(("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children").c_str(), "re");
  if (!f) return 0;
  int c = 0;
  if (fscanf(f, "%d", &c) != 1) c = 0;
  fclose(f);
  return c;
}

// Polls `pred` for up to 5 s of real time.
bool eventually(const std::function<bool()>& pred) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    usleep(1000);
  }
  return pred();
}

// True when `active` stays above zero for every one of `n` looks 1 ms apart.
bool stays_active(TreeWatch& w, int n = 50) {
  for (int i = 0; i < n; ++i) {
    if (w.counts().active == 0) return false;
    usleep(1000);
  }
  return true;
}

void block_forever() {
  for (;;) pause();
}

void reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

TEST(TreeWatch, AdoptsTheNextChildOnly) {
  OPEN_WATCH(w);
  EXPECT_EQ(w->root(), 0);
  pid_t child = adopt(*w, block_forever);
  ASSERT_GT(child, 0);
  EXPECT_EQ(w->root(), child);
  EXPECT_TRUE(w->watches(child));
  EXPECT_FALSE(w->watches(getpid()));
  pid_t other = fork_tied();  // not armed: not in the tree
  if (other == 0) block_forever();
  EXPECT_FALSE(w->watches(other));
  EXPECT_TRUE(eventually([&] { return w->counts().active == 0; })) << "blocked children still counted";
  reap(other);
  reap(child);
}

TEST(TreeWatch, BlockedTreeOfProcessesAndThreadsIsQuiet) {
  OPEN_WATCH(w);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = adopt(*w, [&] {
    if (fork_tied() == 0) {
      std::thread t([] { block_forever(); });
      block_forever();
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) threads.emplace_back([&] {
      char c;
      if (read(fds[0], &c, 1) < 0) _exit(3);  // a call the shim does not even see
    });
    block_forever();
  });
  // Quiet once every thread exists and blocks (a count of 0 active alone does not say the set-up
  // is over). At least: a sanitizer's runtime (TSan) adds a thread of its own to the child.
  EXPECT_TRUE(eventually([&] {
    pid_t grandchild = first_child(child);
    return thread_count(child) >= 9 && grandchild > 0 && thread_count(grandchild) >= 2 && w->counts().active == 0;
  }));
  // Network receive work anywhere on the machine counts too (net_rx in tree_watch.bpf.c): a test
  // beside this one sending on the loopback moved the generation in a -j2 run (and, with a
  // Kubernetes test's steady loopback traffic beside it, in each of ten windows once). A blocked
  // tree stays quiet in at least one of fifty windows; one that is not blocked changes in every one.
  auto quiet = w->counts();
  bool stayed = false;
  for (int i = 0; i < 50 && !stayed; ++i) {
    quiet = w->counts();
    usleep(20000);
    stayed = w->counts().generation == quiet.generation;
  }
#ifndef __SANITIZE_THREAD__
  // (ThreadSanitizer's runtime keeps a background thread in every process, which wakes by itself.)
  EXPECT_TRUE(stayed) << "a blocked tree changed in each of fifty windows of 20 ms";
#else
  (void)stayed;
#endif
  // One byte wakes one reader: the tree is active while it runs, quiet once it has exited.
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  EXPECT_TRUE(eventually([&] { return w->counts().exits >= quiet.exits + 1 && w->counts().active == 0; }));
  EXPECT_GT(w->counts().generation, quiet.generation);
  reap(child);
  close(fds[0]);
  close(fds[1]);
}

TEST(TreeWatch, ASpinningThreadOfAGrandchildKeepsTheTreeActive) {
  OPEN_WATCH(w);
  pid_t child = adopt(*w, [] {
    if (fork_tied() == 0) {
      std::thread spin([] {
        std::atomic<long> n{0};
        for (;;) n.fetch_add(1, std::memory_order_relaxed);
      });
      block_forever();
    }
    block_forever();
  });
  usleep(20000);
  EXPECT_TRUE(stays_active(*w));
  reap(child);  // the spinner dies with it (fork_tied)
  EXPECT_TRUE(eventually([&] { return w->counts().active == 0; }));
}

TEST(TreeWatch, AStoppedProcessHoldsTheCount) {
  OPEN_WATCH(w);
  pid_t child = adopt(*w, block_forever);
  ASSERT_TRUE(eventually([&] { return w->counts().active == 0; }));
  kill(child, SIGSTOP);
  EXPECT_TRUE(eventually([&] { return w->counts().active > 0; })) << "a stopped process counted as blocked";
  EXPECT_TRUE(stays_active(*w, 20));
  kill(child, SIGCONT);
  EXPECT_TRUE(eventually([&] { return w->counts().active == 0; }));
  reap(child);
}

TEST(TreeWatch, AnUninterruptibleSleepCountsAsActive) {
  OPEN_WATCH(w);
  // A vfork-style clone: the parent waits in an uninterruptible (killable) sleep until the child
  // execs or exits. clone() itself, not vfork(): ThreadSanitizer turns vfork() into fork().
  static int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = adopt(*w, [&] {
    static char stack[64 * 1024];
    auto body = [](void*) -> int {
      char c;
      long r = syscall(SYS_read, fds[0], &c, 1);  // the child blocks (S) while its parent is in D
      syscall(SYS_exit, r == 1 ? 0 : 1);
      return 0;
    };
    pid_t v = clone(body, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
    if (v > 0) waitpid(v, nullptr, 0);
    block_forever();
  });
  usleep(20000);
  EXPECT_TRUE(stays_active(*w, 20)) << "the vfork parent's D state counted as blocked";
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  EXPECT_TRUE(eventually([&] { return w->counts().active == 0; }));
  reap(child);
  close(fds[0]);
  close(fds[1]);
}

TEST(TreeWatch, WaitQuietWakesWhenTheTreeBlocks) {
  OPEN_WATCH(w);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = adopt(*w, [&] {
    // 50 ms of work, then block.
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (std::chrono::steady_clock::now() < end) {
    }
    char c;
    if (read(fds[0], &c, 1) < 0) _exit(3);
    block_forever();
  });
  bool woken = false;
  for (int i = 0; i < 100 && !woken; ++i) woken = w->wait_quiet(100000) && w->counts().active == 0;
  EXPECT_TRUE(woken);
  EXPECT_EQ(w->counts().active, 0u);
  reap(child);
  close(fds[0]);
  close(fds[1]);
}

// The kernel names the threads that exited, and the processes that may have ended with them, so
// that the controller reads /proc for those alone: a thread that ends while its process lives on
// is named with no process, a grandchild that ends with its process; a range the program no
// longer keeps (it keeps the last 64) is refused.
TEST(TreeWatch, NamesExitedThreadsAndTheProcessesThatEnded) {
  OPEN_WATCH(w);
  int tids[2];
  ASSERT_EQ(pipe(tids), 0);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = adopt(*w, [&] {
    char c;
    // Wait for the start signal, then: one thread that ends (the process lives on), then a
    // grandchild process that ends.
    if (read(go[0], &c, 1) != 1) _exit(3);
    std::thread t([&] {
      pid_t me = static_cast<pid_t>(syscall(SYS_gettid));
      if (write(tids[1], &me, sizeof me) != sizeof me) _exit(3);
    });
    t.join();
    if (read(go[0], &c, 1) != 1) _exit(3);
    pid_t g = fork();
    if (g == 0) _exit(0);
    if (write(tids[1], &g, sizeof g) != sizeof g) _exit(3);
    waitpid(g, nullptr, 0);
    block_forever();
  });
  ASSERT_TRUE(eventually([&] { return w->counts().active == 0; }));
  const uint64_t e0 = w->counts().exits;
  ASSERT_EQ(write(go[1], "x", 1), 1);
  pid_t thread_tid = 0;
  ASSERT_EQ(read(tids[0], &thread_tid, sizeof thread_tid), static_cast<ssize_t>(sizeof thread_tid));
  // At least: a sanitizer's runtime (TSan) may add a thread of its own to a process.
  ASSERT_TRUE(eventually([&] { return w->counts().exits >= e0 + 1 && w->counts().active == 0; }));
  const uint64_t e1 = w->counts().exits;
  std::vector<pid_t> gone, ended;
  EXPECT_TRUE(w->exited(e0, e1, gone, ended));
  EXPECT_NE(std::find(gone.begin(), gone.end(), thread_tid), gone.end());
  EXPECT_TRUE(ended.empty()) << "no process ended";
  EXPECT_TRUE(w->exited(e1, e1, gone, ended));
  EXPECT_TRUE(gone.empty());
  ASSERT_EQ(write(go[1], "x", 1), 1);
  pid_t grandchild = 0;
  ASSERT_EQ(read(tids[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  ASSERT_TRUE(eventually([&] {
    return w->counts().exits >= e1 + 1 && w->counts().active == 0 && w->exited(e1, w->counts().exits, gone, ended) &&
           std::find(ended.begin(), ended.end(), grandchild) != ended.end();
  })) << "the grandchild's process ended";
  EXPECT_NE(std::find(gone.begin(), gone.end(), grandchild), gone.end());
  EXPECT_EQ(std::find(ended.begin(), ended.end(), child), ended.end()) << "the child lives on";
  const uint64_t e2 = w->counts().exits;
  EXPECT_FALSE(w->exited(e2 - 65, e2, gone, ended)) << "more exits than the program keeps";
  EXPECT_FALSE(w->exited(e2, e2 - 1, gone, ended));
  reap(child);
  for (int fd : {tids[0], tids[1], go[0], go[1]}) close(fd);
}

// The count is right only if the kernel ran the program for every event: it drops one that comes
// while the same program runs on that cpu (docs/shim.md, "A check on the count"). Two threads
// waking each other a thousand times through a pipe pair, then both blocked: the count is back
// at zero, and the kernel says it dropped nothing.
TEST(TreeWatch, PingPongEndsAtZeroWithNoEventDropped) {
  OPEN_WATCH(w);
  const uint64_t misses_before = w->misses();
  int ab[2], ba[2];
  ASSERT_EQ(pipe(ab), 0);
  ASSERT_EQ(pipe(ba), 0);
  pid_t child = adopt(*w, [&] {
    std::thread peer([&] {
      char c;
      for (int i = 0; i < 1000; ++i) {
        if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1) _exit(3);
      }
      block_forever();
    });
    char c = 'x';
    for (int i = 0; i < 1000; ++i) {
      if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) _exit(3);
    }
    block_forever();
  });
  bool quiet = false;
  for (int i = 0; i < 200 && !quiet; ++i) {
    quiet = w->counts().active == 0;
    if (!quiet) usleep(10000);
  }
  EXPECT_TRUE(quiet) << "active " << w->counts().active;
  EXPECT_EQ(w->misses(), misses_before);
  reap(child);
  for (int fd : {ab[0], ab[1], ba[0], ba[1]}) close(fd);
}

// Only a thread of the process that loaded the program arms a root: a process outside the tree
// that shares the counters' mapping (a forked child inherits it) and writes armed_tid itself
// adopts nothing (tree_watch_load.h, "The owner").
TEST(TreeWatch, OnlyTheOwnerArmsARoot) {
  OPEN_WATCH(w);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t outsider = fork_tied();  // not armed: outside the tree, sharing the mapping
  if (outsider == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(3);
    w->adopt_next_fork();  // writes its own tid: it is not the owner
    pid_t grandchild = fork();
    if (grandchild == 0) _exit(0);
    waitpid(grandchild, nullptr, 0);
    _exit(w->root() == 0 ? 0 : 4);
  }
  ASSERT_GT(outsider, 0);
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(outsider, &status, 0), outsider);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(w->root(), 0) << "a fork by a process that is not the owner made a root";
  close(go[0]);
  close(go[1]);
}

#ifdef VTIME_BUILD_SHIM_DIR
// The helper's path (tree_watch_load.h): a process without capabilities (root's child turned
// nobody) has the program loaded by vtime-treewatch beside the shim, and counts its tree with it
// as root does in-process: a blocked root counts zero, a busy one more, and the wake-up comes.
TEST(TreeWatch, HandedOverByTheHelperToAnUnprivilegedProcess) {
  std::string helper = std::string(VTIME_BUILD_SHIM_DIR) + "/vtime-treewatch";
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  if (getxattr(helper.c_str(), "security.capability", nullptr, 0) <= 0) {
    GTEST_SKIP() << helper << " has no file capabilities (the build did not run as root, or no setcap)";
  }
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t user = fork_tied();
  if (user == 0) {
    // In the child: 0 all checks passed, 10 + n check n failed, 9 skipped (reason on the pipe).
    auto say = [&](int code, const std::string& what) {
      if (write(report[1], what.data(), what.size()) < 0) _exit(3);
      _exit(code);
    };
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) say(11, "cannot become nobody");
    std::string why;
    auto uw = TreeWatch::open(&why, VTIME_BUILD_SHIM_DIR);
    if (!uw) say(why.find("before 6.5") != std::string::npos ? 9 : 12, why);
    pid_t child = adopt(*uw, block_forever);
    if (uw->root() != child || !uw->watches(child) || uw->watches(getpid())) say(13, "adoption");
    if (!eventually([&] { return uw->counts().active == 0; })) say(14, "a blocked root still counted");
    pid_t busy = adopt(*uw, [] {
      for (;;) {
      }
    });
    if (!stays_active(*uw)) say(15, "a busy root not counted");
    kill(busy, SIGKILL);
    waitpid(busy, nullptr, 0);
    bool woken = false;
    for (int i = 0; i < 100 && !woken; ++i) woken = uw->wait_quiet(100000) && uw->counts().active == 0;
    if (!woken) say(16, "no wake-up when the count dropped to zero");
    reap(child);
    say(0, "");
  }
  ASSERT_GT(user, 0);
  close(report[1]);
  char buf[512] = {};
  ssize_t n = read(report[0], buf, sizeof buf - 1);
  (void)n;
  close(report[0]);
  int status = 0;
  ASSERT_EQ(waitpid(user, &status, 0), user);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  if (WEXITSTATUS(status) == 9) GTEST_SKIP() << buf;
  EXPECT_EQ(WEXITSTATUS(status), 0) << buf;
}
#endif
