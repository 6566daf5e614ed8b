// Whether a call comes from a sanitizer's runtime rather than from the program.
//
// Why: a sanitized program (ASan, TSan, LSan, UBSan: ours in the asan and tsan presets, or a
// user's scheduler built to be debugged) runs the sanitizer's own code beside its own, and that
// code busy-waits on real work: LeakSanitizer's stop-the-world (at exit, and in
// __lsan_do_recoverable_leak_check) calls sched_yield until its tracer thread has suspended every
// thread and scanned the heap. Under `--cpu-model calls` those yields were charged as the
// program's computation, and how many a scan takes is real time: a job agent of an
// ASan-built vtime-slurm paid 1 ms at its exit in one run and nothing in the next, and
// `slurm.replay` diverged there (1 ms charged in the recording, none in the replay). The
// sanitizer is not the program: its calls pass through uncharged.
//
// Only runtimes loaded as shared libraries are known (gcc's default; clang's -shared-libsan): a
// runtime linked into the executable (clang's default) has no name to be found by.
#pragma once

namespace vtime::shim {

// Notes where the loaded sanitizer runtimes' code lies. Called once by the shim's constructor,
// before any code of the program runs (every shared library is mapped by then).
void find_sanitizer_runtimes();

// True if `pc` (a return address) lies in a sanitizer runtime's code.
bool in_sanitizer_runtime(const void* pc);

}  // namespace vtime::shim
