// Process lifecycle under a session (see process.h).
#include <vtime/internal/process.h>

#include <vtime/internal/agent.h>
#include "clock_stats.h"
#include <vtime/internal/context.h>
#include "libc.h"
#include <vtime/internal/timers.h>
#include <vtime/internal/trace_request.h>
#include <vtime/internal/waits.h>

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace vtime::detail {
namespace {

void child_after_fork() {
  after_fork_child();
  agent_after_fork_child();
  thread_after_fork_child();
  clock_stats_after_fork_child();
  timers_after_fork_child();
}

// The session variables as this process received them, to put back into an exec'd program's
// environment when the caller passes one without them (env -i, subprocess with env=...).
struct SavedEnv {
  std::string session;
  std::string preload;
};
SavedEnv& saved() {
  static SavedEnv s = [] {
    SavedEnv e;
    if (const char* v = getenv(kSessionEnv)) e.session = v;
    if (const char* v = getenv("LD_PRELOAD")) e.preload = v;
    return e;
  }();
  return s;
}

bool has_var(char* const envp[], const char* name, const std::string& want_contains) {
  size_t n = strlen(name);
  for (char* const* e = envp; e && *e; ++e) {
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
      return want_contains.empty() || strstr(*e + n + 1, want_contains.c_str()) != nullptr;
    }
  }
  return false;
}

// Returns envp itself, or a copy with the session variables restored (storage kept in `keep`).
char* const* fix_env(char* const envp[], std::vector<std::string>& keep, std::vector<char*>& out) {
  if (!context()) return envp;
  SavedEnv& s = saved();
  bool need_session = !s.session.empty() && !has_var(envp, kSessionEnv, s.session);
  bool need_preload = !s.preload.empty() && !has_var(envp, "LD_PRELOAD", s.preload);
  if (!need_session && !need_preload) return envp;
  for (char* const* e = envp; e && *e; ++e) {
    if (need_session && strncmp(*e, "VTIME_SESSION=", 14) == 0) continue;
    if (need_preload && strncmp(*e, "LD_PRELOAD=", 11) == 0) {
      keep.push_back(s.preload + ":" + (*e + 11));
      keep.back().insert(0, "LD_PRELOAD=");
      need_preload = false;
      continue;
    }
    out.push_back(*e);
  }
  if (need_session) keep.push_back(std::string(kSessionEnv) + "=" + s.session);
  if (need_preload) keep.push_back("LD_PRELOAD=" + s.preload);
  for (auto& k : keep) out.push_back(k.data());
  out.push_back(nullptr);
  return out.data();
}

// Before executing `path`: a program the shim cannot reach (static, Go) is handed to the
// session's tracer (trace_request.h), unless this process is traced already (the tracer then
// follows the exec by itself). Without a tracer it runs on the real clock, and says so.
void trace_if_needed(const std::string& path, const char* const* envp = environ) {
  ProcessContext* c = context();
  if (!c || path.empty()) return;
  ExecKind kind = exec_kind(path);
  if (kind == ExecKind::kShim) return;
  pid_t tracer = c->seg->header.tracer_pid.load(std::memory_order_acquire);
  if (tracer > 0) {
    FILE* f = fopen("/proc/thread-self/status", "re");
    char line[128];
    pid_t traced_by = 0;
    while (f && fgets(line, sizeof line, f)) {
      if (strncmp(line, "TracerPid:", 10) == 0) traced_by = static_cast<pid_t>(atoi(line + 10));
    }
    if (f) fclose(f);
    if (traced_by == tracer) return;
  }
  int e = request_trace(*c->seg);
  if (e == 0) e = install_trace_filter(c->seg->header.serial.load(std::memory_order_acquire), charged_calls(envp));
  if (e != 0) {
    fprintf(stderr, "vtime: %s is a %s program and cannot be traced (%s): it will read the real clock\n", path.c_str(),
            exec_kind_name(kind), e == ESRCH ? "no vtime-tracer in this session" : strerror(e));
  }
}

}  // namespace

void install_fork_handlers() {
  saved();  // capture the environment before the program changes it
  pthread_atfork(nullptr, nullptr, child_after_fork);
}

pid_t process_fork() {
  ChildId id = next_child_id();
  pid_t pid = libc().fork();
  // Registered by the parent, still running: the controller can never see the tree idle while
  // the child exists but is not in the table yet.
  if (pid > 0) register_child(pid, id);
  return pid;
}

int process_execve(const char* path, char* const argv[], char* const envp[]) {
  std::vector<std::string> keep;
  std::vector<char*> out;
  if (path) trace_if_needed(path, envp);
  return libc().execve(path, argv, fix_env(envp, keep, out));
}

int process_execvpe(const char* file, char* const argv[], char* const envp[]) {
  std::vector<std::string> keep;
  std::vector<char*> out;
  if (file) trace_if_needed(resolve_command(file, getenv("PATH")), envp);
  return libc().execvpe(file, argv, fix_env(envp, keep, out));
}

int process_execv(const char* path, char* const argv[]) {
  if (path) trace_if_needed(path);
  return libc().execv(path, argv);
}

int process_execvp(const char* file, char* const argv[]) {
  if (file) trace_if_needed(resolve_command(file, getenv("PATH")));
  return libc().execvp(file, argv);
}

int process_spawn(bool search_path, pid_t* pid, const char* path, const posix_spawn_file_actions_t* fa,
                  const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  std::vector<std::string> keep;
  std::vector<char*> out;
  pid_t local = 0;
  ChildId id = next_child_id();
  int r = (search_path ? libc().posix_spawnp : libc().posix_spawn)(&local, path, fa, attr, argv,
                                                                     fix_env(envp, keep, out));
  if (r == 0) {
    register_child(local, id);
    if (pid) *pid = local;
  }
  return r;
}

int process_close(int fd) {
  timers_forget_fd(fd);
  return libc().close(fd);
}

}  // namespace vtime::detail
