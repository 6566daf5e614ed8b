// Starting a command inside a session (see vtime/spawn.h).
#include <vtime/spawn.h>
#include <vtime/tree_watch.h>

#include <vtime/internal/futex.h>
#include <vtime/internal/notify_sleeps.h>
#include <vtime/internal/trace_request.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace vtime {

namespace {

// Starts the session's tracer (tracer/tracer.h) if it is not running yet: vtime-tracer beside
// the shim. Without it, programs the shim cannot reach are refused when they are the command,
// and run on the real clock when the tree executes them (the shim says so).
void start_tracer(const Session& session, const std::string& shim_path, std::string& why) {
  auto& h = session.segment().header;
  if (h.tracer_pid.load(std::memory_order_acquire) != 0) return;
  std::string dir = shim_path.substr(0, shim_path.rfind('/') + 1);
  std::string tracer = dir + "vtime-tracer";
  if (dir.empty() || access(tracer.c_str(), X_OK) != 0) {
    why = "vtime-tracer not found next to " + shim_path;
    return;
  }
  std::string env_session = std::string(kSessionEnv) + "=" + session.attach_spec();
  std::vector<char*> envp;
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "VTIME_SESSION=", 14) != 0) envp.push_back(*e);
  }
  envp.push_back(env_session.data());
  envp.push_back(nullptr);
  char* args[] = {tracer.data(), nullptr};
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    why = std::string("fork: ") + strerror(errno);
    return;
  }
  if (pid == 0) {
    // SIGTERM, not SIGKILL: when vtime dies the tracer ends the tree before it exits.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(125);
    execve(args[0], args, envp.data());
    _exit(126);
  }
  // Ready once it published its pid; it answers within milliseconds.
  auto* word = reinterpret_cast<std::atomic<uint32_t>*>(&h.tracer_pid);
  for (int i = 0; i < 100 && h.tracer_pid.load(std::memory_order_acquire) == 0; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      why = "vtime-tracer exited at start";
      return;
    }
    timespec ts{0, 50000000};
    detail::futex_wait(word, 0, &ts);
  }
  if (h.tracer_pid.load() == 0) why = "vtime-tracer did not start";
}

// The child's environment: the caller's, with the session, the shim, GOMAXPROCS and `extra_env`
// set over it.
std::vector<std::string> child_environment(const Session& session, const std::string& shim_path,
                                           const std::vector<std::pair<std::string, std::string>>& extra_env) {
  std::vector<std::pair<std::string, std::string>> overrides = {{kSessionEnv, session.attach_spec()}};
  // Go programs run their goroutines on one thread at a time unless the user says otherwise:
  // goroutines woken at one virtual instant then run in an order no real-time race decides
  // (docs/tracer.md). Virtual time does not pass while they compute, so parallelism would only
  // change which order wins.
  if (!getenv("GOMAXPROCS")) overrides.emplace_back("GOMAXPROCS", "1");
  std::string preload = shim_path;
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  overrides.emplace_back("LD_PRELOAD", preload);
  for (auto& kv : extra_env) overrides.push_back(kv);
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (auto& [k, v] : overrides) replaced = replaced || k == key;
    if (!replaced) env_strings.push_back(std::move(entry));
  }
  for (auto& [k, v] : overrides) env_strings.push_back(k + "=" + v);
  return env_strings;
}

// Notified sleeps (abi::kTracerNotify): decided once per session, before its first tree starts,
// where the kernel count decides idleness and the serial gate is off (it holds waits at their
// exit, which the tracer's own sleeps pass through). VTIME_NOTIFY=0 turns them off.
void decide_notified_sleeps(abi::Segment& seg, const TreeWatch* watch) {
  auto& h = seg.header;
  if (h.notify_sleeps.load(std::memory_order_acquire) != 0) return;
  const char* env = getenv("VTIME_NOTIFY");
  const bool wanted = watch != nullptr && h.serial.load(std::memory_order_acquire) == 0 && !(env != nullptr && strcmp(env, "0") == 0);
  // 3: wanted, but this machine cannot (the tracer says so once, at the first image it traces).
  h.notify_sleeps.store(!wanted ? 2 : detail::notify_sleeps_supported() ? 1 : 3, std::memory_order_release);
}

// The child's side of the fork: only async-signal-safe calls. Reports a failure (negative: the
// tracer refused) on `errfd` before it exits.
[[noreturn]] void exec_child(abi::Segment& seg, pid_t parent, int errfd, bool traced, char** args, char** envp) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the controller that owns the clock
  if (getppid() != parent) _exit(125);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (traced) {
    int e = detail::request_trace(seg);
    if (e == 0) e = detail::install_trace_filter(seg.header.serial.load(std::memory_order_acquire), detail::charged_calls(envp));
    if (e != 0) {
      e = -e;  // negative: the tracer refused (see below)
      ssize_t w = write(errfd, &e, sizeof e);
      (void)w;
      _exit(125);
    }
  }
  execvpe(args[0], args, envp);
  int e = errno;
  ssize_t w = write(errfd, &e, sizeof e);
  (void)w;
  _exit(e == ENOENT ? 127 : 126);
}

}  // namespace

SpawnResult spawn_in_session(const Session& session, const std::string& shim_path,
                             const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& extra_env,
                             TreeWatch* watch) {
  SpawnResult res;
  if (argv.empty()) {
    res.exit_code = 125;
    res.error = "no command given";
    return res;
  }
  // Everything the child needs is built here, before fork: the caller may have threads (the
  // broker's ZeroMQ I/O threads), and after fork the child may only make async-signal-safe calls
  // (an allocator lock held by another thread at fork time would never be released).
  std::vector<std::string> env_strings = child_environment(session, shim_path, extra_env);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // A program the shim cannot reach (static, Go) runs under the tracer: the child asks to be
  // traced and installs the filter before it executes it.
  std::string tracer_why;
  start_tracer(session, shim_path, tracer_why);
  std::string target;
  for (const auto& e : env_strings) {
    if (e.rfind("PATH=", 0) == 0) target = detail::resolve_command(argv[0], e.c_str() + 5);
  }
  if (target.empty()) target = detail::resolve_command(argv[0], nullptr);
  detail::ExecKind kind = target.empty() ? detail::ExecKind::kShim : detail::exec_kind(target);
  bool traced = kind != detail::ExecKind::kShim;
  if (traced && session.segment().header.tracer_pid.load() == 0) {
    res.exit_code = 126;
    res.error = "'" + argv[0] + "' is a " + detail::exec_kind_name(kind) + " program, which needs the tracer: " + tracer_why;
    return res;
  }
  abi::Segment& seg = session.segment();
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    res.exit_code = 125;
    res.error = std::string("pipe: ") + strerror(errno);
    return res;
  }
  decide_notified_sleeps(seg, watch);
  pid_t parent = getpid();
  if (watch) watch->adopt_next_fork();
  pid_t child = fork();
  if (child < 0) {
    res.exit_code = 125;
    res.error = std::string("fork: ") + strerror(errno);
    return res;
  }
  if (child == 0) {
    close(errpipe[0]);
    exec_child(seg, parent, errpipe[1], traced, args.data(), envp.data());
  }
  close(errpipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(errpipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(errpipe[0]);
  if (n == sizeof child_errno && child_errno < 0) {
    waitpid(child, nullptr, 0);
    res.exit_code = 125;
    res.error = "cannot trace '" + argv[0] + "': " + strerror(-child_errno);
    return res;
  }
  if (n == sizeof child_errno) {
    waitpid(child, nullptr, 0);
    res.exit_code = child_errno == ENOENT ? 127 : 126;
    res.error = "cannot run '" + argv[0] + "': " + strerror(child_errno);
    return res;
  }
  res.pid = child;
  return res;
}

}  // namespace vtime
