// What makes a Go program's runs differ beyond time (docs/tracer.md "Go's randomness"), made
// deterministic for traced Go programs at their exec stop.
//
// Go's runtime seeds its hash functions (map iteration order) and its fast random numbers
// (`select` among ready channels, map iteration's starting point, the scheduler's choices) from
// the 16 random bytes the kernel puts in the auxiliary vector (AT_RANDOM), and gives every thread
// (M) its own generator seeded with the CPU's time-stamp counter (`cputicks`, an RDTSC/RDTSCP
// instruction). So the same program fed the same input in the same virtual time iterated its maps
// and chose among ready channels differently on every run. The tracer writes bytes derived from
// the executable's path over AT_RANDOM, and makes the counter trap (prctl PR_SET_TSC,
// PR_TSC_SIGSEGV: the instruction raises SIGSEGV, which the tracer sees first) and answers it with
// a value of the virtual clock, so that both seeds are the same in every run.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <string>

namespace vtime::tracer {

// The seed of a Go program's random bytes, derived from the file name of its executable `exe`
// (a path).
uint64_t random_seed(const std::string& exe);

// Overwrites AT_RANDOM of process `pid` (stopped at its exec stop) with bytes derived from `seed`.
bool seed_random(pid_t pid, uint64_t seed);

// Answers a getrandom(buf, len, flags) call of thread `tid` (at its seccomp stop, registers in
// `r`) with the next `len` bytes of the process's stream (`seed`, `*drawn` bytes drawn so far):
// crypto/rand's keys and nonces drew real randomness, and with it how much a Go program
// allocated while it made them (RSA key generation tries random candidates), which moves its
// memory profiler's sampling, whose draws come from the runtime's random generators:
// kube-scheduler, which generates a certificate at start, then started its informers in a
// different order on every run. The call is skipped.
bool answer_getrandom(pid_t pid, pid_t tid, user_regs_struct& r, uint64_t seed, uint64_t* drawn);

// How a Go program's counter reads reach the tracer: the CPU's trap (trap_tsc), or runtime.cputicks
// patched to fault (go_ticks.h) where the trap is not honoured. VTIME_GO_TICKS=trap or =patch forces
// one (tests force the patch on machines that trap); anything else, or unset: probed.
enum class TscRoute { kTrap, kPatch };
TscRoute tsc_route();

// Whether this machine honours prctl(PR_SET_TSC, PR_TSC_SIGSEGV): a child asks for the trap and
// reads the counter, and must die of SIGSEGV. Some hypervisors accept the call and never trap
// (nested and lightweight VMs: Firecracker guests seen), so its return code proves nothing.
bool tsc_trap_honoured();

// Makes RDTSC and RDTSCP fault in thread `tid` (and every thread and process it creates),
// through the `syscall` instruction at `insn`. A signal arriving meanwhile is held in *held.
bool trap_tsc(pid_t tid, uint64_t insn, int* held);

// At a SIGSEGV stop: the length of the RDTSC (2) or RDTSCP (3) instruction thread `tid` faulted
// on, with its registers in `r`; 0 if it faulted on something else (a real SIGSEGV).
unsigned tsc_insn(pid_t pid, pid_t tid, user_regs_struct& r);

// Completes that instruction with `value` (RDTSCP's processor id is 0); the caller resumes the
// thread without the signal.
bool complete_tsc(pid_t tid, user_regs_struct& r, unsigned len, uint64_t value);

}  // namespace vtime::tracer
