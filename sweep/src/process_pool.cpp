#include <vtime/sweep/process_pool.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

namespace vtime::sweep {
namespace {

using Clock = std::chrono::steady_clock;

// How long a child asked to stop (SIGINT, or SIGTERM on a timeout) may take to write its outputs
// before its whole process group is killed.
constexpr auto kGrace = std::chrono::seconds(20);
constexpr useconds_t kPoll = 20000;

struct Running {
  pid_t pid;
  Clock::time_point started;
  Clock::time_point kill_at = Clock::time_point::max();
  bool timed_out = false;
  bool interrupted = false;
};

// The command as a shell would take it back: a run's log starts with it, so any run can be
// repeated by hand.
std::string shell_line(const std::vector<std::string>& argv) {
  std::string out = "$";
  for (const auto& a : argv) out += " " + shell_word(a);
  return out + "\n";
}

pid_t spawn(const Command& c) {
  const std::string header = shell_line(c.argv);  // built before fork: the child only writes
  std::vector<char*> args;
  for (const auto& a : c.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) {
    if (pid > 0) setpgid(pid, pid);  // also in the child: whichever runs first
    return pid;
  }
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(125);
  int log = open(c.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0) _exit(125);
  dup2(null, 0);
  dup2(log, 1);
  dup2(log, 2);
  if (write(1, header.data(), header.size()) < 0) _exit(125);
  // The sweep blocks or catches signals for itself; a run starts from the defaults.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  execv(args[0], args.data());
  dprintf(2, "vtime sweep: cannot run %s: %s\n", args[0], strerror(errno));
  _exit(127);
}

}  // namespace

std::string shell_word(const std::string& a) {
  bool plain = !a.empty() && a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                 "0123456789_./=:,@%+-{}") == std::string::npos;
  if (plain) return a;
  std::string out = "'";
  for (char ch : a) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

bool run_all(const std::vector<Command>& commands, const PoolOptions& o) {
  std::map<size_t, Running> running;
  size_t next = 0;
  bool stopping = false;
  const size_t parallel = o.parallel ? o.parallel : 1;
  while (next < commands.size() || !running.empty()) {
    if (!stopping && o.stop_requested && o.stop_requested() != 0) {
      stopping = true;
      for (auto& [i, r] : running) {
        r.interrupted = true;
        kill(r.pid, SIGINT);
        r.kill_at = std::min(r.kill_at, Clock::now() + kGrace);
      }
    }
    if (stopping && running.empty()) break;
    while (!stopping && running.size() < parallel && next < commands.size()) {
      if (o.on_start) o.on_start(next);
      pid_t pid = spawn(commands[next]);
      if (pid < 0) {
        Outcome out;
        out.exit_code = 125;
        if (o.on_done) o.on_done(next, out);
      } else {
        running[next] = Running{pid, Clock::now()};
      }
      ++next;
    }
    auto now = Clock::now();
    for (auto it = running.begin(); it != running.end();) {
      Running& r = it->second;
      int status = 0;
      if (waitpid(r.pid, &status, WNOHANG) == r.pid) {
        Outcome out;
        out.wall_s = std::chrono::duration<double>(now - r.started).count();
        out.timed_out = r.timed_out;
        out.interrupted = r.interrupted;
        if (WIFEXITED(status)) {
          out.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          out.signal = WTERMSIG(status);
          out.exit_code = 128 + out.signal;
        }
        kill(-r.pid, SIGKILL);  // whatever the run left behind in its group
        size_t index = it->first;
        it = running.erase(it);
        if (o.on_done) o.on_done(index, out);
        continue;
      }
      if (o.run_timeout_s > 0 && !r.timed_out && !r.interrupted &&
          now - r.started > std::chrono::duration<double>(o.run_timeout_s)) {
        r.timed_out = true;
        kill(r.pid, SIGTERM);
        r.kill_at = now + kGrace;
      }
      if (now >= r.kill_at) {
        kill(-r.pid, SIGKILL);
        r.kill_at = Clock::time_point::max();
      }
      ++it;
    }
    usleep(kPoll);
  }
  return next == commands.size() && !stopping;
}

}  // namespace vtime::sweep
