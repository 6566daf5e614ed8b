// vtime-slurm's Batsim conversation: Batsim on one side, a private Slurm cluster on the other.
//
// What it is for: a Batsim scheduler (it binds the REP endpoint like any other) whose decisions
// are Slurm's. At SIMULATION_BEGINS it writes slurm.conf from the platform, starts slurmctld and
// one slurmd per compute resource as its own children (so they run under the same virtual
// clock) and answers once every node is idle; each JOB_SUBMITTED becomes a Slurm batch job at
// that virtual instant; when Slurm starts a job, the job's agent tells the bridge (agent_link.h)
// and the bridge sends EXECUTE_JOB on the nodes Slurm chose; JOB_COMPLETED ends the job's agent,
// so Slurm sees the end at the same instant. Decisions heard after a reply are handed over in
// the reply to a tick the bridge asks the broker for (vtime_request_tick), sorted by Slurm job
// id so that traces do not depend on which agent spoke first.
//
// Example:
//     BridgeOptions o{.endpoint = "ipc:///tmp/x/sched", .extra_path = "fcfs.conf",
//                     .dir = "/tmp/out_slurm", .self = "/usr/bin/vtime-slurm"};
//     return run_bridge(o);   // exit codes below
#pragma once

#include <string>

namespace vtime::slurm {

inline constexpr int kBridgeOk = 0;
inline constexpr int kBridgeSlurmFailed = 1;  // a daemon failed or Slurm misbehaved (named on stderr)
inline constexpr int kBridgeUsage = 2;        // bad command line, EXTRA file or directory
inline constexpr int kBridgeProtocol = 3;     // Batsim sent something invalid, or ZeroMQ failed

struct BridgeOptions {
  std::string endpoint;    // ZeroMQ endpoint to bind (REP)
  std::string extra_path;  // the user's slurm.conf lines, may be empty
  std::string dir;         // Slurm's directory for this run (created; kept afterwards)
  std::string self;        // this executable: the interpreter of every job script
  int start_timeout_s = 120;  // virtual seconds the cluster may take to come up
};

int run_bridge(const BridgeOptions& o);

}  // namespace vtime::slurm
