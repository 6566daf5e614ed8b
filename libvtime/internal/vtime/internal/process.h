// Process lifecycle under a session: children are registered by the parent before they run,
// the child of a fork starts with fresh per-process state, and exec keeps the session.
#pragma once

#include <spawn.h>
#include <sys/types.h>

namespace vtime::detail {

pid_t process_fork();
int process_execve(const char* path, char* const argv[], char* const envp[]);
int process_execvpe(const char* file, char* const argv[], char* const envp[]);
// execv and execvp: libc's own call its internal execve, which the shim never sees.
int process_execv(const char* path, char* const argv[]);
int process_execvp(const char* file, char* const argv[]);
int process_spawn(bool search_path, pid_t* pid, const char* path, const posix_spawn_file_actions_t* fa,
                  const posix_spawnattr_t* attr, char* const argv[], char* const envp[]);
// close() of one of our timerfds forgets it; then the real close.
int process_close(int fd);
// Installs the fork handlers (called once, on attach).
void install_fork_handlers();

}  // namespace vtime::detail
