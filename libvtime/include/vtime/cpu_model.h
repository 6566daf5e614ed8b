// The CPU-time model of a session: how much virtual time computation takes.
//
// What it is for: vtime's clock is frozen while any thread of the wrapped tree runs and jumps when
// the whole tree is idle. Programs that wait by running (a loop on the clock, a strict
// `now > deadline` check at the deadline, CPython's GIL hand-over) would then never see time
// move. The model says what computation costs:
//   zero   nothing: exact event semantics; a busy-wait hangs (vtime says so on stderr);
//   calls  each clock read and each call that does not block (a zero-timeout poll that finds
//          nothing, sched_yield, a timed wait already past) costs `cost_ns`, paid as a sleep when
//          a thread's debt at one instant reaches kCpuQuantumNs; and when the tree computes
//          without any such call for longer than `busy_limit_ns` of real time while timed waits
//          are pending, the clock runs with real time until the tree is idle again. Deterministic
//          unless that limit is reached (docs/design.md);
//   real   the clock runs at `scale` x real time whenever the tree is busy, and still jumps when
//          it is idle: decision time is real time. Not deterministic by nature.
//
// Example:
//     vtime::CpuModelOptions cpu;                       // calls, 1 us per call
//     auto opts = vtime::session_options(cpu, epoch);   // for Session::create
//     ctl.set_cpu_model(cpu);                           // the controller's part
#pragma once

#include <vtime/abi.h>
#include <vtime/session.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vtime {

// A thread pays its `calls` debt (sleeps it) once it reaches this much: time moves by at least a
// millisecond at a time, and a thread is delayed only after a thousand charged calls at one
// instant (at the default cost), which no program that is not busy-waiting makes.
inline constexpr int64_t kCpuQuantumNs = 1'000'000;

struct CpuModelOptions {
  abi::CpuModel model = abi::kCpuCalls;
  int64_t cost_ns = 1'000;               // calls: 1 us per charged call
  double scale = 1.0;                    // real: virtual seconds per real second while busy
  int64_t busy_limit_ns = 500'000'000;   // calls: 0 never lets the clock run
  int64_t sleep_latency_ns = 0;          // any model: a sleep ends this long after its deadline
};

// "zero", "calls", "real" -> the model; nullopt otherwise.
std::optional<abi::CpuModel> parse_cpu_model(std::string_view name);
const char* cpu_model_name(uint32_t model);
// The one-line error for an unknown model name, listing the models.
std::string cpu_model_error(std::string_view name);

// SessionOptions carrying the model's part that the wrapped processes apply.
inline SessionOptions session_options(const CpuModelOptions& cpu, int64_t epoch_ns) {
  SessionOptions o;
  o.epoch_ns = epoch_ns;
  o.cpu_model = cpu.model;
  o.cpu_cost_ns = cpu.model == abi::kCpuCalls ? cpu.cost_ns : 0;
  o.cpu_quantum_ns = cpu.model == abi::kCpuCalls ? kCpuQuantumNs : 0;
  o.sleep_latency_ns = cpu.sleep_latency_ns;
  return o;
}

}  // namespace vtime
