// vtime/observe.h: ProcessNames, the descriptors of /proc stat files a recorder keeps open.
#include <vtime/observe.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace {

std::string comm(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

int open_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// A child that names itself "first", then on a byte from the pipe "second", then exits on the next.
struct Child {
  pid_t pid = 0;
  int go = -1;
  Child() {
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid = fork();
    if (pid == 0) {
      close(p[1]);
      char c;
      prctl(PR_SET_NAME, "first");
      if (read(p[0], &c, 1) != 1) _exit(1);
      prctl(PR_SET_NAME, "second");
      if (read(p[0], &c, 1) != 1) _exit(1);
      _exit(0);
    }
    close(p[0]);
    go = p[1];
  }
  void step() { ASSERT_EQ(write(go, "x", 1), 1); }
  void wait_name(const std::string& want) {
    for (int i = 0; i < 2000 && comm(pid) != want; ++i) usleep(1000);
    ASSERT_EQ(comm(pid), want);
  }
};

TEST(ProcessNames, ReadsTheCurrentNameThroughOneDescriptor) {
  vtime::ProcessNames names;
  Child c;
  c.wait_name("first");
  int before = open_fds();
  EXPECT_EQ(names.get(c.pid), "first");
  EXPECT_EQ(open_fds(), before + 1);  // kept open
  c.step();
  c.wait_name("second");
  EXPECT_EQ(names.get(c.pid), "second");  // read again, not cached
  EXPECT_EQ(open_fds(), before + 1);       // through the same descriptor
  c.step();
  ASSERT_EQ(waitpid(c.pid, nullptr, 0), c.pid);
  EXPECT_EQ(names.get(c.pid), "");  // gone: the descriptor fails and is closed
  EXPECT_EQ(open_fds(), before);
  close(c.go);
}

TEST(ProcessNames, KeepOnlyClosesTheOthers) {
  vtime::ProcessNames names;
  int before = open_fds();
  EXPECT_EQ(names.get(getpid()), comm(getpid()));
  EXPECT_EQ(names.get(getppid()), comm(getppid()));
  EXPECT_EQ(open_fds(), before + 2);
  names.keep_only({getpid()});
  EXPECT_EQ(open_fds(), before + 1);
  names.keep_only({});
  EXPECT_EQ(open_fds(), before);
}

}  // namespace
