// The broker: one Batsim conversation on each side, one virtual clock between them.
//
// What it is for: Batsim (or `vtime sim`) wants an event-based decision process; a real
// scheduler lives in real time. The broker answers Batsim on the scheduler's behalf: it forwards
// each Batsim message to the scheduler (which runs under the shim, on the session's clock), waits
// until the scheduler's whole process tree is idle (exact mode) or a real-time budget is spent
// (timeout mode), fires the scheduler's timers due by then, and answers Batsim with every decision
// collected plus one CALL_ME_LATER for the scheduler's earliest pending deadline.
//
// Example:
//     vtime::broker::Options o;
//     o.batsim_endpoint = "ipc:///tmp/x/batsim";
//     o.scheduler_endpoint = "ipc:///tmp/x/sched";
//     o.scheduler_command = {"./periodic_fcfs", "-s", "ipc:///tmp/x/sched", "--period", "1"};
//     o.shim_path = "/usr/lib/vtime/libvtime-shim.so";
//     int code = vtime::broker::run(o);   // exit codes: see broker.h kExit*
#pragma once

#include <vtime/broker/run_observer.h>
#include <vtime/protocol/events.h>
#include <vtime/cpu_model.h>
#include <vtime/time.h>

#include <sys/types.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace vtime::broker {

// Exit codes (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadReply = 3;       // the scheduler sent an invalid reply
inline constexpr int kExitSchedulerDied = 4;  // the scheduler exited or crashed before the end
inline constexpr int kExitSchedulerHung = 5;  // busy without replying for --crash-timeout
inline constexpr int kExitSchedulerStuck = 6; // idle, no reply, nothing pending: never replies
inline constexpr int kExitBatsimError = 7;    // Batsim sent garbage, or died
inline constexpr int kExitSimTimeLimit = 8;   // the simulation went past --max-sim-time (a scheduler that never ends)
inline constexpr int kExitInternal = 125;

enum class SyncPolicy { kExact, kTimeout };

// The simulator side of the conversation. By default a ZeroMQ REP socket bound to
// Options::batsim_endpoint; a replay plugs in the recorded simulator instead.
class BatsimPort {
 public:
  virtual ~BatsimPort() = default;
  virtual std::string recv() = 0;
  virtual void send(const std::string& bytes) = 0;
  // A simulator in this process may hand its messages over as they are, without JSON text
  // between them (reading and writing it was a fifth of vtime's own CPU time per advance of a
  // run through Slurm): the broker then calls recv_message and send_message instead, and writes
  // a message's text only where text is needed (a recorder, a message it forwards to the
  // scheduler, debug logs). The messages are those recv() and send() would carry, read back.
  virtual bool speaks_messages() const { return false; }
  virtual protocol::Message recv_message() { throw std::logic_error("this port speaks text"); }
  virtual void send_message(protocol::Message) { throw std::logic_error("this port speaks text"); }
};

// Thrown by a BatsimPort or a record sink to end the run at once with `code` (a replay that
// found a divergence). The scheduler's tree is killed; nothing more is recorded.
struct Aborted : std::runtime_error {
  int code;
  Aborted(int c, const std::string& what) : std::runtime_error(what), code(c) {}
};

// Thrown by a BatsimPort whose simulator has stopped (failed, interrupted, or ended early): the
// run ends with `code`, and `what()` is reported and recorded like any other failure.
struct SimulatorGone : std::runtime_error {
  int code;
  SimulatorGone(int c, const std::string& what) : std::runtime_error(what), code(c) {}
};

struct Options {
  std::string batsim_endpoint = "tcp://127.0.0.1:28000";  // bound (REP); Batsim connects
  std::string scheduler_endpoint;                         // connected (REQ); the scheduler binds
  std::vector<std::string> scheduler_command;             // "{endpoint}" in it becomes scheduler_endpoint
  // Added to the scheduler's environment (besides VTIME_SCHED_ENDPOINT), e.g. VTIME_OUTPUT_PREFIX.
  std::vector<std::pair<std::string, std::string>> scheduler_env;
  std::string shim_path;
  int64_t epoch_ns = 0;

  // Decision-time model: 0 = "zero" (the clock is frozen while the scheduler works), otherwise
  // the factor of "wall[:F]" (the clock runs at F times real time while the scheduler is busy).
  double wall_factor = 0;
  // The CPU-time model (vtime/cpu_model.h): its part in the wrapped processes comes with the
  // session, the controller applies the rest. `real` also sets wall_factor (decision time).
  CpuModelOptions cpu{.model = abi::kCpuZero};

  SyncPolicy sync = SyncPolicy::kExact;
  // timeout policy (the Batkube parameters), all in real time except the timesteps.
  Duration timeout = milliseconds(50);       // real time to wait for the scheduler per step
  Duration min_delay = Duration::zero();     // real time always waited after a delivery
  Duration base_timestep = milliseconds(100);  // virtual step when nothing is pending
  Duration max_timestep = seconds(10);
  double backoff_factor = 2.0;
  bool fast_forward_when_idle = true;

  Duration crash_timeout = seconds(30);      // real time a scheduler may stay busy without replying
  // Real time for the scheduler's start-up: binding its endpoint, then answering the first
  // message and settling after it. Zero: crash_timeout. A start-up can be seconds of computation
  // at a frozen clock (a Kubernetes control plane), far more than any later decision.
  Duration start_timeout = Duration::zero();
  Duration cml_lead = microseconds(1);       // a CALL_ME_LATER is never closer than this to now
  bool stop_timers_when_done = true;         // no timer CALL_ME_LATER once every job is done
  // Ends the run (kExitSimTimeLimit) when Batsim's time passes this; zero: no limit. Under the
  // timeout policy a scheduler that lost an event may keep asking for wake-ups forever.
  Duration max_sim_time = Duration::zero();
  std::function<void(const std::string&)> progress;  // called with a status line, may be empty
  pid_t batsim_pid = 0;                       // when known: its death is reported
  RunObserver* observer = nullptr;            // when set, told every message, timer and advance (the recorder)
  BatsimPort* batsim_port = nullptr;          // when set, used instead of the ZeroMQ socket
};

struct Summary {
  uint64_t batsim_messages = 0;
  uint64_t scheduler_messages = 0;
  uint64_t ticks = 0;
  uint64_t timer_call_me_laters = 0;
  uint64_t advances = 0;
  uint64_t handovers = 0;  // hand-overs of the serial gate (vtime_serialize), 0 when off
  TimePoint end_time;
};

// Runs the whole conversation until SIMULATION_ENDS has been answered and the scheduler has
// exited. Returns an exit code above; `summary` is filled either way.
int run(const Options& opts, Summary* summary = nullptr);

}  // namespace vtime::broker
