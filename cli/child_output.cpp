// Running a helper program to its end and keeping what it printed (child_output.h).
#include "child_output.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace vtime::cli {

bool ChildOutput::ok() const { return ran && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

ChildOutput run_capturing(const std::string& exe, const std::vector<std::string>& args, bool with_stderr) {
  ChildOutput r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  std::fflush(nullptr);  // nothing buffered here is printed twice by the child
  std::vector<std::string> argv = {exe};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return r;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (with_stderr) dup2(fds[1], STDERR_FILENO);
    std::vector<char*> p;
    for (auto& a : argv) p.push_back(a.data());
    p.push_back(nullptr);
    execv(exe.c_str(), p.data());
    _exit(127);
  }
  close(fds[1]);
  r.ran = true;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    r.out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  return r;
}

}  // namespace vtime::cli
