// Running a benchmark program as a child with a chosen environment and a real-time limit, and
// capturing its standard output (the benchmark drivers compare runs of the same program).
//
// Example:
//     bench::ChildResult r = bench::run_captured({"/bin/echo", "hi"}, {{"FAKETIME", "@2024-01-01"}}, 10);
//     if (r.ok()) use(r.out);
// With a `drive` function (e.g. a vtime controller loop), the output is read on a second thread
// while drive(child, deadline_ns) runs on the calling one; it must not reap the child
// (bench::child_exited() looks without reaping).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "raw_clock.h"

extern char** environ;

namespace bench {

struct ChildResult {
  std::string out;
  int status = -1;
  bool timed_out = false;
  bool ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// Environment variables that decide how a program's clock behaves; every run starts without
// them and sets only its own.
inline bool is_clock_env(const char* kv) {
  static const char* names[] = {"LD_PRELOAD=", "VTIME_SESSION=", "FAKETIME"};
  for (const char* n : names) {
    if (strncmp(kv, n, strlen(n)) == 0) return true;
  }
  return false;
}

// True once `pid` (a child) has exited; leaves it to be reaped by waitpid.
inline bool child_exited(pid_t pid) {
  siginfo_t si{};
  return waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

using DriveFn = std::function<void(pid_t child, int64_t deadline_ns)>;

// Runs argv with the current environment minus the clock variables plus `set`; kills the
// child's whole process group after `limit_s` seconds of real time. stderr passes through.
inline ChildResult run_captured(const std::vector<std::string>& argv,
                                const std::vector<std::pair<std::string, std::string>>& set, int limit_s,
                                const DriveFn& drive = {}) {
  ChildResult r;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (!is_clock_env(*e)) env.emplace_back(*e);
  }
  for (auto& [k, v] : set) env.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(fds[1], STDOUT_FILENO);
    execve(args[0], args.data(), envp.data());
    fprintf(stderr, "cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(fds[1]);
  int64_t deadline = raw_monotonic_ns() + static_cast<int64_t>(limit_s) * 1000000000LL;
  auto reader = [&] {
    char buf[4096];
    for (;;) {
      int64_t left_ms = (deadline - raw_monotonic_ns()) / 1000000;
      if (left_ms <= 0) {
        r.timed_out = true;
        kill(-pid, SIGKILL);
        break;
      }
      pollfd p{fds[0], POLLIN, 0};
      int n = poll(&p, 1, static_cast<int>(left_ms));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) continue;
      ssize_t got = read(fds[0], buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      r.out.append(buf, static_cast<size_t>(got));
    }
  };
  if (drive) {
    std::thread t(reader);
    drive(pid, deadline);
    t.join();
  } else {
    reader();
  }
  close(fds[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

}  // namespace bench
