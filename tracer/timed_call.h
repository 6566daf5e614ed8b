// The timed waits of a traced thread, as the tracer turns them into waits on virtual time.
//
// At a seccomp stop (the filter of trace_request.h), decode() reads the call's timeout and gives
// its virtual deadline and how to rewrite it: the same wait without a timeout (a sleep becomes
// a ppoll of no descriptors), carrying the wait's tag (abi::kTaggedWaitMark | seq) in an argument
// the kernel ignores, where the controller reads it in /proc/TID/syscall as it does for the
// shim's fd waits. The kernel then wakes the thread for everything but the timeout; at the
// deadline the tracer interrupts the call and sets its result to what the timeout gives.
//
// Rewritten (x86-64):
//   nanosleep(req, rem), clock_nanosleep(clk, flags, req, rem) -> ppoll(NULL, 0, NULL, NULL, tag)
//   futex(WAIT | WAIT_BITSET, ..., timeout, _, ...)            -> the same, timeout NULL, uaddr2 tag
//   epoll_wait / epoll_pwait / epoll_pwait2 (no signal mask)    -> epoll_pwait(.., -1, NULL, tag)
//   poll(fds, n, ms), ppoll(fds, n, tmo, NULL, _)               -> ppoll(fds, n, NULL, NULL, tag)
// Forms with no argument free for the tag (select, pselect6, and ppoll or epoll_pwait(2) with a
// signal mask) lose only their timeout, and the tracer follows them to their end with a
// syscall-exit stop (exit_tracked): one stop more per wait.
//
// Direct sleeps. Where the process maps the session segment (vdso_patch.h), a sleep becomes
// instead a wait on its waiter slot's own futex word, which the controller wakes at the deadline
// without the tracer (abi::kTracerDirect):
//   nanosleep, clock_nanosleep -> futex(&slot.word, FUTEX_WAIT_BITSET, word, &forever, tag, bit)
// (`bit`: abi::direct_bit of the wait's seq, so a wake-up meant for an earlier wait on the slot
// cannot end this one).
// Woken, it returns 0, as the sleep would. Only the controller ever wakes that word, and it does
// not change it, so the call never fails with EAGAIN. The timeout (`forever`, ~35,000 years on
// the monotonic clock, absolute as FUTEX_WAIT_BITSET takes it)
// gives the kernel's sleep semantics after a signal: EINTR if a handler ran, a transparent
// restart (restart_syscall) if none did. The tracer then follows the thread to its next call to
// learn which (Tracer::on_syscall_stop).
#pragma once

#include <vtime/abi.h>

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <optional>

namespace vtime::tracer {

struct TimedCall {
  int64_t deadline_ns = 0;  // virtual, timer slack included
  int64_t early_ns = 0;     // the slack's range (abi::WaiterSlot::early_ns)
  uint32_t reason = 0;      // abi::Reason
  bool realtime_abs = false;
  int64_t realtime_shift = 0;  // realtime_abs: the clock's realtime shift the deadline was computed with
  // A relative nanosleep or clock_nanosleep: where the time left goes when a signal ends it
  // (the rewrite drops the argument), 0 none.
  uint64_t rem_addr = 0;
  long nr = 0;              // the call as rewritten
  int tag_arg = 0;          // the argument (0-5) that carries the tag
  long timeout_result = 0;  // its return value at the deadline
  bool exit_tracked = false;  // no tag: the tracer stops the thread at the call's exit
  // select and pselect6 at their deadline: the descriptor sets (at these addresses, `set_bytes`
  // each) come back empty and the timeout (at `timeout_addr`, a timeval or timespec) zero.
  uint64_t sets[3] = {0, 0, 0};
  size_t set_bytes = 0;
  uint64_t timeout_addr = 0;
  // A direct sleep (see above): where the process sees its slot's word, the word's value, and
  // where it sees `forever`.
  bool direct = false;
  uint64_t word_addr = 0;
  uint32_t word_value = 0;
  uint64_t forever_addr = 0;
  uint32_t word_bit = 0;
  // A charge (below): at the deadline the thread makes the call it was stopped at after all.
  bool charged = false;
};

// The call thread `tid` of process `pid` is stopped at, given its registers; nullopt when it
// runs as it is (no timeout, a zero or past one, a clock vtime does not virtualise, invalid
// arguments the kernel will refuse, or a form the tracer cannot rewrite: *uncontrolled then).
std::optional<TimedCall> decode(pid_t pid, const user_regs_struct& r, const abi::Segment& seg, bool* uncontrolled);

// A charged call (trace_request.h, charged_calls): the thread waits `cost_ns` of virtual time
// first, as a ppoll of no descriptors, for `reason`, and the tracer then makes it execute the
// call (Tracer::on_syscall_stop).
TimedCall charge(const abi::Segment& seg, int64_t cost_ns, uint32_t reason);

// Makes a sleep (reason kReasonSleep, not exit-tracked) a direct one, waiting on the futex word
// at `word_addr` (holding `word_value`) with bitset `word_bit` and the timeout at `forever_addr`
// (as the process sees them). False for any other call.
bool make_direct(TimedCall& c, uint64_t word_addr, uint32_t word_value, uint32_t word_bit, uint64_t forever_addr);

// The untimed (or direct), tagged form of the call.
void rewrite(user_regs_struct& r, const TimedCall& c, uint64_t tag);

// Registers of a thread stopped while inside the rewritten call (interrupted, about to return
// or restart): true if they are that call's. A direct sleep the kernel restarted is in
// restart_syscall, whose registers no longer name the call: the caller must know the sleep
// still current (the kernel also restarts it silently when a signal woke the thread but another
// thread of its process took the signal, with no stop for the tracer to see).
bool in_call(const user_regs_struct& r, const TimedCall& c, uint64_t tag);

// The kernel's "interrupted, restart or fail with EINTR" results.
bool interrupted_result(long rax);

// What the call's timeout leaves in the thread's memory (select's empty sets): false if the
// memory could not be written.
bool write_timeout_effects(pid_t pid, const TimedCall& c);

}  // namespace vtime::tracer
