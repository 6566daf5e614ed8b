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
  // Virtual seconds from slurmctld's start to Batsim's time 0 (less kPassPhaseNs): the workload
  // meets a cluster that has been up a while, as a real one has, its start-up scheduling pass
  // (~3 s after start) over and batch_sched_delay's rate limit (3 s from the last pass) no longer
  // holding back the first submissions (issue 41: every start was 3 s late with a 20 ms set-up).
  // It also sets the phase of slurmctld's periodic passes (the full one every sched_interval,
  // 60 s; backfill's every bf_interval, 30 s) against the workload: 5 s is where the independent
  // real-time reference (bench/slurm_reference.py) starts its workload, and with it vtime agreed
  // with the real runs on every job, builtin and backfill; with 10 s, 1 and 4 of 24 jobs were off.
  int settle_s = 5;
  // Jobs due at one instant go to Slurm in their ids' numeric order, as a person replaying a
  // trace submits them (bridges/job_order.h); false: in Batsim's order (string order of ids).
  bool natural_order = true;
  // Virtual time from Slurm starting a job to the job's own work starting: what a real job's
  // launch and teardown take (slurmstepd, the batch shell, the program; measured 12-28 ms,
  // median 17-20 ms, between `sched: Allocate` and `_job_complete` less the job's sleep on this
  // machine). Without it a job ends on the very instant of a background pass, which then runs
  // first; in reality the end comes just after (docs/slurm.md).
  long long job_start_latency_ns = 17'000'000;
};

// Batsim's time 0 falls this long before a whole second of the cluster's clock, so that a job
// submitted on a whole second of Batsim's time reaches slurmctld just before its once-a-second
// background pass (which starts pending jobs) in the same second, as `sbatch` on a whole second
// does in real clusters measured (the pass came 20-110 ms after such submissions). With no gap the
// pass and the submission would share an instant and every start would wait a second more.
inline constexpr long kPassPhaseNs = 50'000'000;

int run_bridge(const BridgeOptions& o);

}  // namespace vtime::slurm
