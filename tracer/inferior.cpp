// Registers, memory and injected system calls of traced threads (see inferior.h).
#include "inferior.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vtime::tracer {

bool get_regs(pid_t tid, user_regs_struct& r) { return ptrace(PTRACE_GETREGS, tid, nullptr, &r) == 0; }
bool set_regs(pid_t tid, const user_regs_struct& r) { return ptrace(PTRACE_SETREGS, tid, nullptr, &r) == 0; }

namespace {
bool mem_io(pid_t pid, uint64_t addr, void* buf, size_t n, bool write) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(pid));
  int fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t done = write ? pwrite(fd, buf, n, static_cast<off_t>(addr)) : pread(fd, buf, n, static_cast<off_t>(addr));
  close(fd);
  return done == static_cast<ssize_t>(n);
}
}  // namespace

bool read_mem(pid_t pid, uint64_t addr, void* buf, size_t n) {
  // One system call (a timeout read at every timed wait); /proc/PID/mem for what it refuses.
  iovec local{buf, n}, remote{reinterpret_cast<void*>(addr), n};
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n)) return true;
  return mem_io(pid, addr, buf, n, false);
}
bool write_mem(pid_t pid, uint64_t addr, const void* buf, size_t n) {
  return mem_io(pid, addr, const_cast<void*>(buf), n, true);
}

std::optional<long> remote_syscall(pid_t tid, uint64_t insn, int* held, long nr, long a1, long a2, long a3, long a4,
                                   long a5, long a6) {
  user_regs_struct saved{};
  if (!get_regs(tid, saved)) return std::nullopt;
  user_regs_struct r = saved;
  r.rip = insn;
  r.rax = static_cast<unsigned long long>(nr);
  r.orig_rax = static_cast<unsigned long long>(-1);  // not in a system call: nothing to restart
  r.rdi = static_cast<unsigned long long>(a1);
  r.rsi = static_cast<unsigned long long>(a2);
  r.rdx = static_cast<unsigned long long>(a3);
  r.r10 = static_cast<unsigned long long>(a4);
  r.r8 = static_cast<unsigned long long>(a5);
  r.r9 = static_cast<unsigned long long>(a6);
  if (!set_regs(tid, r) || ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr) != 0) return std::nullopt;
  // The step ends in a SIGTRAP stop right after the instruction. A signal arriving first is
  // reported before it: held for the caller, and we step on.
  for (;;) {
    int status = 0;
    pid_t w = waitpid(tid, &status, __WALL);
    if (w < 0 && errno == EINTR) continue;
    if (w != tid || !WIFSTOPPED(status)) return std::nullopt;
    if (WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0) break;
    if ((status >> 16) == 0 && held) *held = WSTOPSIG(status);
    if (ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr) != 0) return std::nullopt;
  }
  user_regs_struct after{};
  if (!get_regs(tid, after)) return std::nullopt;
  set_regs(tid, saved);
  return static_cast<long>(after.rax);
}

pid_t thread_group(pid_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
  FILE* f = fopen(path, "re");
  if (!f) return 0;
  char line[256];
  pid_t tgid = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Tgid:", 5) == 0) {
      tgid = static_cast<pid_t>(strtol(line + 5, nullptr, 10));
      break;
    }
  }
  fclose(f);
  return tgid;
}

}  // namespace vtime::tracer
