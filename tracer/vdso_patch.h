// Clock reads of a traced process in virtual time, at the cost of a few loads: its vDSO's
// clock_gettime, gettimeofday and time jump to code of ours (clock_blob.S) that reads the
// session's clock from the segment's first page, mapped read-only into the process.
//
// Done once per executed image, at the exec stop, before the program runs an instruction: the
// tracer makes the process open the segment (/proc/OWNER/fd/N, as the shim does), map its first
// page and an anonymous page for the code, and close the file, then writes the code and
// overwrites the three vDSO entries with an absolute jump. Go finds the vDSO's functions by
// name in the auxiliary vector's image and glibc (static or dynamic) by its own lookup: both
// land on the patched entries.
#pragma once

#include <sys/types.h>

#include <string>

namespace vtime::tracer {

// Patches the vDSO of process `pid`, stopped at its exec stop in thread `tid`. `segment_path` is
// the session's attach spec. *code_page is where the clock code went (its sleeps, which pay the
// CPU-time model's debt, are the program's), *header_page where the segment's first page is mapped
// (read-only: the clock, and the word threads held by the serial gate sleep on). On failure, `why` says what went wrong (the process
// then reads the real clock: the caller reports it). A signal arriving meanwhile is held in *held.
bool patch_vdso(pid_t pid, pid_t tid, const std::string& segment_path, int* held, uint64_t* code_page, uint64_t* header_page,
                std::string& why);

}  // namespace vtime::tracer
