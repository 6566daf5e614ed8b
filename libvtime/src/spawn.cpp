// Starting a command inside a session (see vtime/spawn.h).
#include <vtime/spawn.h>
#include <vtime/tree_watch.h>

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
  std::vector<std::pair<std::string, std::string>> overrides = {{kSessionEnv, session.attach_spec()}};
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
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    res.exit_code = 125;
    res.error = std::string("pipe: ") + strerror(errno);
    return res;
  }
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
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the controller that owns the clock
    if (getppid() != parent) _exit(125);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(args[0], args.data(), envp.data());
    int e = errno;
    ssize_t w = write(errpipe[1], &e, sizeof e);
    (void)w;
    _exit(e == ENOENT ? 127 : 126);
  }
  close(errpipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(errpipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(errpipe[0]);
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
