// --pin-cpu (cli/cpu_pin.h): each case pins a forked child, never the test process, and reports
// through the child's exit status; what a pinned process starts is checked with grep reading its
// own /proc/self/status.
#include "cpu_pin.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

using vtime::cli::CpuPin;
using vtime::cli::pin_cpu;
using vtime::cli::valid_pin_cpu;

namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

void allow(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// Runs `body` in a child; its return value is the child's exit status.
int in_child(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

struct LockDir {
  std::string path;
  LockDir() {
    char t[] = "/tmp/vtime-pin-test-XXXXXX";
    path = mkdtemp(t);
  }
  ~LockDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST(CpuPin, ValidValues) {
  std::string err;
  EXPECT_TRUE(valid_pin_cpu("off", &err));
  EXPECT_TRUE(valid_pin_cpu("auto", &err));
  EXPECT_TRUE(valid_pin_cpu("0", &err));
  EXPECT_TRUE(valid_pin_cpu("17", &err));
  for (const char* bad : {"", "x", "-1", "1.5", "on", "999999", "0x1"}) {
    err.clear();
    EXPECT_FALSE(valid_pin_cpu(bad, &err)) << bad;
    EXPECT_NE(err.find("expected off, auto or a CPU number"), std::string::npos) << err;
  }
}

TEST(CpuPin, OffLeavesTheAffinityAlone) {
  LockDir d;
  auto before = allowed_cpus();
  std::string err;
  auto pin = pin_cpu("off", d.path, &err);
  ASSERT_TRUE(pin);
  EXPECT_EQ(pin->cpu(), -1);
  EXPECT_EQ(allowed_cpus(), before);
}

TEST(CpuPin, AutoPinsToOneAllowedCpuAndChildrenInherit) {
  auto cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: auto leaves the affinity as it is";
  LockDir d;
  int rc = in_child([&] {
    std::string err;
    auto pin = pin_cpu("auto", d.path, &err);
    if (!pin || pin->cpu() < 0) return 1;
    auto now = allowed_cpus();
    if (now.size() != 1 || now[0] != pin->cpu()) return 2;
    // A program started afterwards runs on that CPU only.
    std::string cmd = "grep -qx 'Cpus_allowed_list:[[:space:]]*" + std::to_string(pin->cpu()) + "' /proc/self/status";
    return system(cmd.c_str()) == 0 ? 0 : 3;
  });
  EXPECT_EQ(rc, 0);
}

// flock locks belong to an open file description, so one process holding several pins stands for
// several runs started one after the other (each from the full set of CPUs: a process already on
// one CPU, by taskset or an earlier pin, is left there by auto).
TEST(CpuPin, EachAutoRunTakesACpuNoOtherHoldsThenSharesWhenAllAreHeld) {
  auto cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed";
  LockDir d;
  int rc = in_child([&] {
    std::string err;
    std::vector<CpuPin> runs;
    std::vector<int> taken;
    for (size_t i = 0; i < cpus.size(); ++i) {
      allow(cpus);
      auto p = pin_cpu("auto", d.path, &err);
      if (!p) return 1;
      taken.push_back(p->cpu());
      runs.push_back(std::move(*p));
    }
    std::sort(taken.begin(), taken.end());
    if (taken != cpus) return 2;  // every allowed CPU once
    // A process already on one CPU stays there.
    auto kept = pin_cpu("auto", d.path, &err);
    if (!kept || kept->cpu() != -1 || allowed_cpus().size() != 1) return 5;
    // Every CPU held: the next run shares the one it is on rather than failing.
    allow(cpus);
    auto extra = pin_cpu("auto", d.path, &err);
    if (!extra || extra->cpu() < 0) return 3;
    // A run that ends frees its CPU for the next.
    int freed = runs[0].cpu();
    runs.erase(runs.begin());
    allow(cpus);
    auto next = pin_cpu("auto", d.path, &err);
    if (!next || next->cpu() != freed) return 4;
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST(CpuPin, ANumberOutsideTheAllowedSetIsRefused) {
  LockDir d;
  std::string err;
  auto pin = pin_cpu(std::to_string(CPU_SETSIZE - 1), d.path, &err);
  EXPECT_FALSE(pin);
  EXPECT_NE(err.find("is not one this process may run on"), std::string::npos) << err;
}

TEST(CpuPin, ANumberPinsThere) {
  auto cpus = allowed_cpus();
  LockDir d;
  int want = cpus.back();
  int rc = in_child([&] {
    std::string err;
    auto pin = pin_cpu(std::to_string(want), d.path, &err);
    if (!pin || pin->cpu() != want) return 1;
    auto now = allowed_cpus();
    return now.size() == 1 && now[0] == want ? 0 : 2;
  });
  EXPECT_EQ(rc, 0);
}
