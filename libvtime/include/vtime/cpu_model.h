// The CPU-time model of a session: how much virtual time computation takes.
//
// What it is for: vtime's clock is frozen while any thread of the wrapped tree runs and jumps when
// the whole tree is idle. Programs that wait by running (a loop on the clock, a strict
// `now > deadline` check at the deadline, CPython's GIL hand-over) would then never see time
// move. The model says what computation costs:
//   zero   nothing: exact event semantics; a busy-wait hangs (vtime says so on stderr);
//   calls  past `burst_calls` of them at one virtual instant, each clock read and each call that
//          does not block (a zero-timeout poll that finds nothing, sched_yield, a timed wait
//          already past) costs `cost_ns`, paid as a sleep when a thread's debt reaches
//          kCpuQuantumNs; and when the tree computes
//          without any such call for longer than `busy_limit_ns` of real time while timed waits
//          are pending, the clock runs with real time until the tree is idle again. Deterministic
//          unless that limit is reached (docs/design.md);
//   real   the clock runs at `scale` x real time whenever the tree is busy, and still jumps when
//          it is idle: decision time is real time. Not deterministic by nature.
//
// Example:
//     vtime::CpuModelOptions cpu;                       // calls, 10 us per call past 5,000
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
// millisecond at a time.
inline constexpr int64_t kCpuQuantumNs = 1'000'000;

// The defaults of `calls`, calibrated on what programs do (docs/shim.md "CPU-time model"):
// - free calls per thread and instant: the most a thread that is not busy-waiting was seen to
//   make at one instant is 2,248 (CPython importing asyncio, unittest, concurrent.futures,
//   email, http.client, xml.dom, multiprocessing and test.support); Slurm's daemons make at most
//   1,012 (slurmctld's start). Twice the first. A spin loop makes them in 5,000 iterations
//   (CPython's asyncio loop turning on a selector that returns at once: 37 ms of real time).
// - the cost of one charged call past them: what one turn of such a loop costs in real time
//   (7.4 us measured, CPython 3.11 on a 2.4 GHz EPYC), so that a busy-wait takes about as long in
//   real time as it waits in virtual time. A busy-wait ends at the same virtual instant whatever
//   the cost (the debt is paid in whole quanta); the cost sets how many turns that takes.
// Traces recorded before the burst was an option replay with 20,000 (their header has no
// burst_calls) and carry their own cost.
inline constexpr int64_t kCpuBurstCalls = 5'000;
inline constexpr int64_t kCpuBurstCallsBefore = 20'000;
// Linux's default timer slack of a task (/proc/self/timerslack_ns): how late its sleeps and
// timed waits end at least (CpuModelOptions::timer_slack_ns, vtime/internal/timer_slack.h).
inline constexpr int64_t kLinuxTimerSlackNs = 50'000;

struct CpuModelOptions {
  abi::CpuModel model = abi::kCpuCalls;
  int64_t cost_ns = 10'000;              // calls: 10 us per charged call past the burst
  int64_t burst_calls = kCpuBurstCalls;  // calls: free charged calls per thread and instant
  double scale = 1.0;                    // real: virtual seconds per real second while busy
  int64_t busy_limit_ns = 500'000'000;   // calls: 0 never lets the clock run
  int64_t sleep_latency_ns = 0;          // any model: a sleep ends this long after its deadline
  int64_t timer_slack_ns = 0;            // any model: Linux's timer slack on every timed wait
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
  o.cpu_burst_calls = cpu.model == abi::kCpuCalls ? cpu.burst_calls : 0;
  o.sleep_latency_ns = cpu.sleep_latency_ns;
  o.timer_slack_ns = cpu.timer_slack_ns;
  return o;
}

}  // namespace vtime
