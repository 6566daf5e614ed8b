// Acting on a stopped thread of a traced process: its registers, its memory, and system calls
// made on its behalf (the tracer maps pages into it that way).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace vtime::tracer {

bool get_regs(pid_t tid, user_regs_struct& r);
bool set_regs(pid_t tid, const user_regs_struct& r);

// Memory of process `pid` through /proc/PID/mem (writes reach read-only pages, as a debugger's
// breakpoints do). false on a short transfer.
bool read_mem(pid_t pid, uint64_t addr, void* buf, size_t n);
bool write_mem(pid_t pid, uint64_t addr, const void* buf, size_t n);

// Runs system call `nr` in stopped thread `tid` with the `syscall` instruction at `insn` (an
// address in the thread's process), by single-stepping it there; the thread's registers are
// restored afterwards. The kernel's result (negative errno), or nullopt if the thread could not
// be stepped (it died). A signal that stops the thread before the step is held in *held (the
// caller delivers it when it resumes the thread).
std::optional<long> remote_syscall(pid_t tid, uint64_t insn, int* held, long nr, long a1 = 0, long a2 = 0,
                                   long a3 = 0, long a4 = 0, long a5 = 0, long a6 = 0);

// The thread group (process) of `tid`, from /proc; 0 if gone.
pid_t thread_group(pid_t tid);

}  // namespace vtime::tracer
