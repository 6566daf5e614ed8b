// Process lifecycle: children are registered before they run, exec keeps the session, and
// close() forgets our emulated timerfds. vfork is a fork: a vfork child may only exec or _exit,
// which a fork child does just as well, and a wrapper cannot return into a shared stack.
#include "export.h"

#include <vtime/internal/process.h>

#include <spawn.h>

VTIME_SHIM_EXPORT pid_t fork(void) { return vtime::detail::process_fork(); }
VTIME_SHIM_EXPORT pid_t vfork(void) { return vtime::detail::process_fork(); }
VTIME_SHIM_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return vtime::detail::process_execve(path, argv, envp);
}
VTIME_SHIM_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return vtime::detail::process_execvpe(file, argv, envp);
}
VTIME_SHIM_EXPORT int execv(const char* path, char* const argv[]) { return vtime::detail::process_execv(path, argv); }
VTIME_SHIM_EXPORT int execvp(const char* file, char* const argv[]) { return vtime::detail::process_execvp(file, argv); }
VTIME_SHIM_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* fa,
                                  const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return vtime::detail::process_spawn(false, pid, path, fa, attr, argv, envp);
}
VTIME_SHIM_EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* fa,
                                   const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return vtime::detail::process_spawn(true, pid, file, fa, attr, argv, envp);
}
VTIME_SHIM_EXPORT int close(int fd) { return vtime::detail::process_close(fd); }
