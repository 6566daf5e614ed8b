// DaemonSet (bridges/daemon_set.h) with real programs: how a daemon that dies at start is
// reported, whichever of its log and its output holds the reason.
#include "daemon_set.h"

#include <gtest/gtest.h>

#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

namespace {

using vtime::bridges::DaemonSet;
using vtime::bridges::DaemonSpec;

class DaemonSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vtime-daemons-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  // Starts `script` under sh as daemon "d" and returns how its death is described.
  std::string death_of(const std::string& script) {
    DaemonSet set;
    set.start(DaemonSpec{"d", {"sh", "-c", script}, dir_ + "/d.log", dir_ + "/d.out", std::nullopt, ""});
    for (int i = 0; i < 1000; ++i) {
      if (auto dead = set.reap()) return *dead;
      pollfd p{set.fds().empty() ? -1 : set.fds()[0], POLLIN, 0};
      poll(&p, 1, 10);
    }
    ADD_FAILURE() << "the daemon did not exit";
    return {};
  }
  std::string dir_;
};

// slurmd without a cgroup filesystem: the log is created empty, the reason goes to stderr.
TEST_F(DaemonSetTest, EmptyLogQuotesStderr) {
  std::string err = death_of(": > " + dir_ + "/d.log; echo 'fatal: cgroup namespace is not mounted' >&2; exit 1");
  EXPECT_NE(err.find("d (pid"), std::string::npos) << err;
  EXPECT_NE(err.find("exited with status 1"), std::string::npos) << err;
  EXPECT_NE(err.find("last lines of its output, " + dir_ + "/d.out"), std::string::npos) << err;
  EXPECT_NE(err.find("cgroup namespace is not mounted"), std::string::npos) << err;
  EXPECT_EQ(err.find("last lines of " + dir_ + "/d.log"), std::string::npos) << err;
}

// Blank lines in a log say nothing: the log is then treated as empty.
TEST_F(DaemonSetTest, BlankLogIsEmpty) {
  std::string err = death_of("printf '\\n\\n  \\n' > " + dir_ + "/d.log; echo 'bad option' >&2; exit 2");
  EXPECT_EQ(err.find("last lines of " + dir_ + "/d.log"), std::string::npos) << err;
  EXPECT_NE(err.find("bad option"), std::string::npos) << err;
}

// Both hold something: both are quoted, the log first.
TEST_F(DaemonSetTest, LogAndStderrBothQuoted) {
  std::string err = death_of("echo 'error: sched/bogus not found' > " + dir_ + "/d.log; echo 'core dumped?' >&2; kill -9 $$");
  EXPECT_NE(err.find("killed by signal 9"), std::string::npos) << err;
  size_t log = err.find("sched/bogus not found");
  size_t out = err.find("core dumped?");
  ASSERT_NE(log, std::string::npos) << err;
  ASSERT_NE(out, std::string::npos) << err;
  EXPECT_LT(log, out) << err;
}

// Nothing at all: said so, with both files named.
TEST_F(DaemonSetTest, NothingWrittenIsSaid) {
  std::string err = death_of("exit 3");
  EXPECT_NE(err.find("it wrote nothing to " + dir_ + "/d.log nor to " + dir_ + "/d.out"), std::string::npos) << err;
}

}  // namespace
