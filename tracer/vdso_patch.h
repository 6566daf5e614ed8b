// Clock reads of a traced process in virtual time, at the cost of a few loads: its vDSO's
// clock_gettime, gettimeofday and time jump to code of ours (clock_blob.S) that reads the
// session's clock from the segment's first page (the whole segment is mapped read-only into the
// process: direct sleeps wait on their waiter slot's word, timed_call.h).
//
// Done once per executed image, at the exec stop, before the program runs an instruction: the
// tracer makes the process open the segment (/proc/OWNER/fd/N, as the shim does), map it and an
// anonymous page for the code, and close the file, then writes the code and
// overwrites the three vDSO entries with an absolute jump. Go finds the vDSO's functions by
// name in the auxiliary vector's image and glibc (static or dynamic) by its own lookup: both
// land on the patched entries.
#pragma once

#include <sys/types.h>

#include <string>

namespace vtime::tracer {

// Where patch_vdso put things in the process.
struct PatchedImage {
  uint64_t code_page = 0;     // the clock code (its sleeps, which pay the CPU-time model's debt, are the program's)
  uint64_t header_page = 0;   // the segment, read-only: the clock, the serial gate's word, the waiter slots
  uint64_t syscall_insn = 0;  // a `syscall` instruction (in the vDSO) for calls made on the process's behalf
  // A timespec of about 35,000 years, for the futex waits of direct sleeps (timed_call.h): a
  // timeout makes the kernel end such a wait with EINTR after a signal handler and restart it
  // otherwise, as it does a sleep.
  uint64_t forever = 0;
};

// Where in the code page `forever` is written.
inline constexpr uint64_t kForeverOffset = 4096 - 16;

// Patches the vDSO of process `pid`, stopped at its exec stop in thread `tid`. `segment_path` is
// the session's attach spec. On failure, `why` says what went wrong (the process then reads the
// real clock: the caller reports it). A signal arriving meanwhile is held in *held.
bool patch_vdso(pid_t pid, pid_t tid, const std::string& segment_path, int* held, PatchedImage* out, std::string& why);

// The value of auxiliary vector entry `type` of process `pid`, 0 if absent.
uint64_t auxv_value(pid_t pid, uint64_t type);

// Where process `pid` has loaded its executable relative to its link-time addresses: 0, or for a
// position-independent executable AT_ENTRY minus the executable's link-time entry point `entry`
// (e_entry; 0: unknown, no bias).
uint64_t load_bias(pid_t pid, uint64_t entry);

}  // namespace vtime::tracer
