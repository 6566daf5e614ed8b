// The per-process view of the session: attachment, process registration, the calling thread's
// slot, and the helpers every family of the C API uses to wait on virtual time.
//
// This is the only process-global state of libvtime (the shim's interposition layer and the C
// API for rewritten programs both need "the session of this process").
#pragma once

#include <vtime/abi.h>
#include <vtime/session.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <cstdint>

namespace vtime::detail {

// Exit status of a wrapped process that was told to attach to a session and could not, or
// whose session owner died while it waited (documented in docs/cli.md).
inline constexpr int kExitAttachFailed = 122;

struct ProcessContext {
  Session session;
  abi::Segment* seg;
  uint32_t proc_index;
  pid_t pid;
};

// The attached context, or nullptr when the environment names no session. The first call
// attaches; a failure to attach prints one line and exits the process (never runs on real time).
ProcessContext* context();
inline bool active() { return context() != nullptr; }

// Registers `pid` (a child just forked or spawned by this process) so that the controller sees
// it before it runs a single instruction of its own.
void register_child(pid_t pid);
// Called in the child after fork: new process slot, fresh thread state, no agent, no timers.
void after_fork_child();

// Virtual now, and conversions between clock ids and the virtual time line.
TimePoint now(ProcessContext& c);
bool is_virtual_clock(clockid_t clk);
// Absolute timespec on clock clk -> virtual instant.
TimePoint from_clock(ProcessContext& c, clockid_t clk, const timespec& abs);
timespec to_clock(ProcessContext& c, clockid_t clk, TimePoint t);

// Tells the controller that something changed (a wait began or ended).
void notify_activity(abi::Segment& seg);

// True while the session owner is alive; checked on real-time heartbeats.
bool owner_alive(ProcessContext& c);
[[noreturn]] void die_owner_gone(ProcessContext& c);

}  // namespace vtime::detail
