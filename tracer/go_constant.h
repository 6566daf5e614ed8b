// A constant in a Go program's code replaced at its exec (docs/tracer.md "A Go function's
// constant").
//
// Why: some latencies of a real system are a fixed property of one loop, not of every wait. In a
// real cluster kube-scheduler's back-off queue is flushed by `wait.Until(flush, 1 s)`, which arms
// its next second after each run: every iteration adds the timer's lateness and the run, and the
// flush drifts through the second by 0.7 ms a second (the reference runs, docs/k8s.md). Under a
// frozen clock it stands still, so a job started by one flush and lasting whole seconds ends on
// the very instant of a later flush, a tie reality never has. Linux's timer slack for every wait
// (--timer-slack) drifts it too, but makes every ticker of every component wake twice (Go's
// poller rounds its waits to whole milliseconds): 1.7x the clock advances. Lengthening that one
// loop's period models the drift where it is, at no cost.
//
// What it does: at the exec stop of a Go program whose environment has
// VTIME_GO_CONSTANT=FUNCTION:FROM:TO[;FUNCTION:FROM:TO...], the tracer finds each FUNCTION (its
// symbol table, or Go's pc-line table of a stripped binary, go_ticks.h) and overwrites the one
// instruction in it that loads the 32-bit constant FROM into a register (`mov $FROM, r32`, or its
// sign-extending 64-bit form) so that it loads TO. Nothing else changes: the program computes as
// before with the other value. A FUNCTION not found, or in which FROM is not loaded exactly once,
// is left alone with a warning.
//
// Example: VTIME_GO_CONSTANT='k8s.io/kubernetes/pkg/scheduler/internal/queue.(*PriorityQueue).Run.func1:1000000000:1001000000'
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vtime::tracer {

inline constexpr const char* kGoConstantEnv = "VTIME_GO_CONSTANT";

struct GoConstant {
  std::string function;  // as Go names it: "main.period", "pkg/path.(*Type).Method.func1"
  uint32_t from = 0;
  uint32_t to = 0;
};

// The constants of a VTIME_GO_CONSTANT value; nullopt and `why` when malformed (an entry without
// two numbers, a number above 2^31-1, an empty function name).
std::optional<std::vector<GoConstant>> parse_go_constants(const std::string& value, std::string& why);

// The offsets in `code` of the 32-bit immediates of the instructions that load `value` into a
// register: B8+r imm32 (MOVL, optionally REX-prefixed) and C7 C0+r imm32 (MOVL/MOVQ to a register).
std::vector<size_t> constant_loads(const std::vector<unsigned char>& code, uint32_t value);

// Overwrites c.from with c.to in function c.function of executable `exe`, which process `pid` has
// just executed (one thread, stopped). False, with `why`, when not done.
bool patch_go_constant(pid_t pid, const std::string& exe, const GoConstant& c, std::string& why);

}  // namespace vtime::tracer
