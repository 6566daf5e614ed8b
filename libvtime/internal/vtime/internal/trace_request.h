// Handing a program the shim cannot reach to the tracer (tracer/, docs/tracer.md).
//
// A static executable never loads the shim, and a Go program reads the clock through the vDSO
// and waits with raw system calls whatever it links. Before such a program is executed (by
// spawn_in_session for the root, by the shim's exec wrappers anywhere in the tree), the thread
// that executes it asks the session's tracer to attach it (request_trace), installs the seccomp
// filter that stops it on timed waits (install_trace_filter), then calls execve: the tracer
// follows it, its threads and its children from there on.
#pragma once

#include <vtime/abi.h>

#include <linux/filter.h>

#include <string>

namespace vtime::detail {

enum class ExecKind {
  kShim,    // dynamically linked, not Go (the shim reaches it), or linking libvtime itself
  kStatic,  // no ELF interpreter
  kGo,      // a Go program (static or not): its runtime bypasses libc
};

// What `path` is, from its ELF headers (a `#!` script: its interpreter's). A file that cannot be
// read or is not ELF is kShim: execve decides what happens to it.
ExecKind exec_kind(const std::string& path);
const char* exec_kind_name(ExecKind k);

// The file execvp would run for `file` with PATH `path_env` (empty: not found).
std::string resolve_command(const std::string& file, const char* path_env);

// Asks the tracer to attach the calling thread and waits for its answer: 0 once attached, else
// an errno (ESRCH: no tracer in the session). Async-signal-safe (a forked child may call it).
int request_trace(abi::Segment& seg);

// Charged calls: system calls of a traced program that cost it virtual time, named in its
// environment, and charged by the tracer before the call runs (tracer/timed_call.h, charge):
//   VTIME_WRITE_COST=FD:NS  each write() to descriptor FD (a program's log: a line per step it takes)
//   VTIME_WRITE_MATCH=A|B   with VTIME_WRITE_COST: only the writes whose first kWriteMatchBytes
//                           bytes contain A or B are charged (the lines that stand for a step,
//                           whatever else a more verbose log writes)
//   VTIME_SYNC_COST=NS      each fsync() and fdatasync() (a disk's write latency: etcd's WAL)
// A malformed or zero value charges nothing.
inline constexpr const char* kWriteCostEnv = "VTIME_WRITE_COST";
inline constexpr const char* kWriteMatchEnv = "VTIME_WRITE_MATCH";
inline constexpr const char* kSyncCostEnv = "VTIME_SYNC_COST";
inline constexpr size_t kWriteMatchBytes = 512;
struct ChargedCalls {
  int write_fd = -1;  // set only with a cost
  int64_t write_ns = 0;
  const char* write_match = nullptr;  // VTIME_WRITE_MATCH's value, inside envp; null: every write
  int64_t sync_ns = 0;
  bool writes() const { return write_fd >= 0; }
  bool syncs() const { return sync_ns > 0; }
  bool any() const { return writes() || syncs(); }
};
// From `envp`. Async-signal-safe (no allocation): a forked child calls it before its exec.
ChargedCalls charged_calls(const char* const* envp);
// Whether `data` (a write's first bytes) contains one of the '|'-separated texts of `match`
// (VTIME_WRITE_MATCH); empty texts match nothing.
bool write_matches(const char* match, const char* data, size_t n);

// Installs the seccomp filter that stops the calling thread (and everything it executes or
// forks) on timed waits for the tracer. Sets no_new_privs first unless the thread has
// CAP_SYS_ADMIN. 0 or an errno. Async-signal-safe. Only once request_trace succeeded: a filtered
// call with no tracer attached fails with ENOSYS. getrandom stops too (tracer/determinism.h).
// `serial` is the session's Header::serial: with the gate on, untimed epoll waits stop too, and
// with thread turns every futex wait (tracer/serial_gate.cpp). The charged calls stop too (one
// more filter, only when `charged` names any).
int install_trace_filter(uint32_t serial, const ChargedCalls& charged = {});

// The clock guard of a process that may set the time (CAP_SYS_TIME permitted) and may install a
// filter without no_new_privs (CAP_SYS_ADMIN effective): a seccomp filter that stops every
// clock-setting system call for the tracer (SECCOMP_RET_TRACE), so that one made as a raw
// `syscall` instruction, which the shim never sees, cannot reach the host's clock: in a traced
// process the tracer emulates it on the virtual clock, in any other it fails with ENOSYS.
// Inherited by every child. Does nothing for other processes (the kernel refuses them anyway).
// True when installed.
bool install_clock_guard();

// The notify filter (abi::kTracerNotify, docs/tracer.md "Notified sleeps"): clock_nanosleep on
// CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME or CLOCK_TAI goes to the controller
// (SECCOMP_RET_USER_NOTIF), every other call is left to the filters below. The tracer installs it
// (with a listener) in a traced image at its exec stop. Its `*len` instructions. A Go image's
// (`go`) hands over its poller's epoll waits with a timeout instead (Go never calls
// clock_nanosleep; its nanosleep is its runtime's housekeeping).
const sock_filter* notify_filter(uint16_t* len, bool go = false);

// The notify filter's listener asks the kernel to run the thread it answers on the answering cpu
// (Linux 6.6): without it, every answer to a sleeping thread on another vCPU costs a cross-cpu
// wake-up, which made a notified sleep dearer than the tracer's own on this kind of machine.
inline constexpr unsigned long kNotifSetFlags = 0x40082104ul;  // SECCOMP_IOCTL_NOTIF_SET_FLAGS
inline constexpr unsigned long kNotifSyncWakeUp = 1;            // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP

}  // namespace vtime::detail
