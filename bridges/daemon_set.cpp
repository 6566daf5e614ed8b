// Daemons of a bridge scheduler (see daemon_set.h).
#include "daemon_set.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <fstream>

namespace vtime::bridges {

DaemonSet::~DaemonSet() {
  for (auto& d : daemons_) {
    if (!d.exited) {
      kill(d.pid, SIGKILL);
      waitpid(d.pid, &d.status, 0);
    }
    if (d.pidfd >= 0) close(d.pidfd);
  }
}

void DaemonSet::start(const DaemonSpec& spec) {
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<char*> argv;
  for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (spec.env) {
    for (auto& e : *spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  int out = open(spec.output.empty() ? "/dev/null" : spec.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                 0644);
  if (out < 0) throw DaemonError("cannot open " + spec.output + " for " + spec.name + ": " + strerror(errno));
  int report[2];  // the child writes its exec errno here; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(out);
    throw DaemonError(std::string("pipe: ") + strerror(errno));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(out);
    close(report[0]);
    close(report[1]);
    throw DaemonError("cannot start " + spec.name + ": fork: " + strerror(e));
  }
  if (pid == 0) {
    // Dies with the bridge, whatever kills it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(out, 1);
    dup2(out, 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) {
      int e = errno;
      ssize_t ignored = write(report[1], &e, sizeof e);
      (void)ignored;
      _exit(127);
    }
    if (spec.env) {
      execvpe(argv[0], argv.data(), envp.data());
    } else {
      execvp(argv[0], argv.data());
    }
    int e = errno;
    ssize_t ignored = write(report[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  close(out);
  close(report[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == sizeof child_errno) {
    waitpid(pid, nullptr, 0);
    throw DaemonError("cannot start " + spec.name + ": " + spec.argv[0] + ": " + strerror(child_errno));
  }
  Daemon d;
  d.spec = spec;
  d.pid = pid;
  d.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (d.pidfd < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    throw DaemonError(std::string("pidfd_open: ") + strerror(errno));
  }
  daemons_.push_back(std::move(d));
}

std::vector<int> DaemonSet::fds() const {
  std::vector<int> out;
  for (auto& d : daemons_) {
    if (!d.exited) out.push_back(d.pidfd);
  }
  return out;
}

bool DaemonSet::reap_one(Daemon& d) {
  if (d.exited) return false;
  if (waitpid(d.pid, &d.status, WNOHANG) != d.pid) return false;
  d.exited = true;
  return true;
}

std::optional<std::string> DaemonSet::reap() {
  std::optional<std::string> first;
  for (auto& d : daemons_) {
    if (reap_one(d) && !stopping_ && !first) first = describe_exit(d);
  }
  return first;
}

bool DaemonSet::running(const std::string& name) const {
  for (auto& d : daemons_) {
    if (d.spec.name == name) return !d.exited;
  }
  return false;
}

std::vector<std::string> DaemonSet::stop_all(std::chrono::milliseconds grace, bool wait_first) {
  stopping_ = true;
  auto wait_all = [&](std::chrono::milliseconds limit) {
    // Sleeps of 10 ms: under vtime they are virtual, so this costs no real time while the
    // daemons shut down on their own timers.
    for (auto waited = std::chrono::milliseconds(0);; waited += std::chrono::milliseconds(10)) {
      bool all = true;
      for (auto& d : daemons_) {
        reap_one(d);
        all = all && d.exited;
      }
      if (all || waited >= limit) return all;
      sleep_ms(10);
    }
  };
  std::vector<std::string> signalled;
  if (wait_all(wait_first ? grace : std::chrono::milliseconds(0))) return signalled;
  for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
    if (!it->exited) {
      kill(it->pid, SIGTERM);
      signalled.push_back(it->spec.name);
    }
  }
  if (wait_all(grace)) return signalled;
  for (auto& d : daemons_) {
    if (!d.exited) {
      kill(d.pid, SIGKILL);
      waitpid(d.pid, &d.status, 0);
      d.exited = true;
    }
  }
  return signalled;
}

void DaemonSet::sleep_ms(long ms) { usleep(static_cast<useconds_t>(ms * 1000)); }

std::string DaemonSet::describe_exit(const Daemon& d) const {
  std::string how;
  if (WIFSIGNALED(d.status)) {
    how = "was killed by signal " + std::to_string(WTERMSIG(d.status)) + " (" + strsignal(WTERMSIG(d.status)) + ")";
  } else {
    how = "exited with status " + std::to_string(WEXITSTATUS(d.status));
  }
  std::string out = d.spec.name + " (pid " + std::to_string(d.pid) + ") " + how;
  // Both the log and the daemon's own output: a daemon that fails before it opens its log (a
  // slurmd without a cgroup filesystem) says why on stderr only, and one that logs says more
  // there than on stderr.
  const std::string log = d.spec.log.empty() ? std::string() : tail(d.spec.log, 8);
  const std::string output = d.spec.output.empty() ? std::string() : tail(d.spec.output, 8);
  if (!log.empty()) out += "; last lines of " + d.spec.log + ":\n" + log;
  if (!output.empty()) out += (log.empty() ? "; " : "\n") + std::string("last lines of its output, ") + d.spec.output + ":\n" + output;
  if (log.empty() && output.empty()) {
    out += "; it wrote nothing" + (d.spec.log.empty() ? std::string() : " to " + d.spec.log) +
           (d.spec.output.empty() ? std::string() : (d.spec.log.empty() ? " to " : " nor to ") + d.spec.output);
  }
  return out;
}

std::string DaemonSet::tail(const std::string& path, int lines) {
  std::ifstream in(path);
  if (!in) return {};
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines say nothing
    last.push_back("  " + line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (auto& l : last) out += l + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace vtime::bridges
