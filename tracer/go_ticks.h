// Go's time-stamp counter reads made deterministic without the CPU's help (docs/tracer.md
// "Go's randomness").
//
// Why: each Go runtime thread seeds its random generator from `runtime.cputicks` (RDTSCP, or
// MFENCE; LFENCE; RDTSC where RDTSCP is missing). The tracer's first route makes those
// instructions fault (prctl PR_SET_TSC, determinism.h), but some machines (nested and
// lightweight VMs) accept the prctl and never fault: the seeds, and with them map order and
// `select` choices, then differ on every run. This route needs no CPU feature: at the exec stop
// the tracer finds runtime.cputicks in the executable (its ELF symbol table, or Go's own
// pc-line table, which stripped Go binaries keep), and overwrites its two counter instructions
// with UD2 (padded with a NOP for RDTSCP). A thread executing one stops with SIGILL at that
// address; the tracer completes it exactly as it completes a trapped read (complete_tsc), with
// the same value, so runs give the same result whichever route a machine allows.
//
// Only the instructions of cputicks are patched: anchored on the instructions around them
// (RDTSCP followed by SHLQ $32, DX; RDTSC preceded by MFENCE; LFENCE), as every Go release
// since 1.x writes the function (runtime/asm_amd64.s), so a byte pattern inside another
// instruction is never taken for one.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vtime::tracer {

// One counter instruction of runtime.cputicks, at its link-time address.
struct TickSite {
  uint64_t addr = 0;
  unsigned len = 0;  // 3: RDTSCP, 2: RDTSC
};

// A function of a Go executable: its link-time address and its code.
struct GoFunction {
  uint64_t addr = 0;
  std::vector<unsigned char> code;
};

// Go function `name` (as Go names it: "runtime.cputicks", "runtime.(*scavengerState).run") in ELF
// executable `path`, from its symbol table or else Go's pc-line table (which stripped Go binaries
// keep); nullopt and `why` when not found or larger than 4 KiB. `*entry` as below.
std::optional<GoFunction> find_go_function(const std::string& path, const std::string& name, std::string& why,
                                           uint64_t* entry);

// The counter instructions of runtime.cputicks in ELF executable `path`, at link-time addresses.
// Empty when none could be found; `why` then says why (not a Go program, an unknown pc-line table
// layout, the function's code not as expected). `*entry` gets the executable's link-time entry
// point (e_entry, 0 if unreadable): the load bias of a position-independent executable is
// AT_ENTRY minus it.
std::vector<TickSite> find_tick_sites(const std::string& path, std::string& why, uint64_t* entry);

// The counter reads at the start of the functions of shared library `path` (found from each
// function's entry in .eh_frame_hdr's table, decoding only the few instructions compilers put
// before such a read: endbr64, pushes, register moves, stack adjustment), at their offsets in
// the file (a process maps the file at offsets its /proc/PID/maps gives). libzmq's clock reads the counter this way to decide whether its cached time is
// stale; left real, the number of its clock reads, and the timeouts it computes from them,
// depended on real time (a Go scheduler on libzmq replayed differently in half its runs).
// Reads in the middle of a function are not found (glibc's mutexes' spin back-off).
std::vector<TickSite> find_prologue_tick_sites(const std::string& path, std::string& why);

// Overwrites each site (moved by `bias`) in process `pid` with UD2 and NOPs, and appends each
// written one, at its address in the process, to *patched. False if a write failed.
bool patch_tick_sites(pid_t pid, const std::vector<TickSite>& sites, uint64_t bias, std::vector<TickSite>* patched);

// The length of the patched counter instruction at `rip` among `sites` (addresses in the
// process), 0 if `rip` is not one of them (a real SIGILL).
unsigned patched_tick_len(const std::vector<TickSite>& sites, uint64_t rip);

}  // namespace vtime::tracer
