// slurm.conf for a private Slurm cluster that mirrors a Batsim platform.
//
// What it is for: vtime-slurm runs Debian's unmodified slurmctld and one slurmd per Batsim
// compute resource on this machine. This file turns the platform (from SIMULATION_BEGINS) into a
// slurm.conf: one Slurm node per compute resource, named "n<resource id>", each slurmd on its own
// loopback port; no munge, no cgroups, no database. The user's EXTRA lines (scheduler, priority,
// partitions, ...) override the generated ones; settings that cannot work in this set-up (they
// would point the daemons elsewhere, need munge, cgroups or slurmdbd) are refused with the line
// that asked for them.
//
// Example:
//     ClusterSpec c{.dir = "/tmp/out_slurm", .resource_ids = {0, 1, 2, 3}, .base_port = 21000};
//     auto extra = parse_extra("SchedulerType=sched/builtin\n", "fcfs.conf");
//     if (!extra) die(extra.error());
//     std::string text = make_slurm_conf(c, *extra);
#pragma once

#include <vtime/protocol/result.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vtime::slurm {

template <class T>
using Result = protocol::Result<T>;

struct ClusterSpec {
  std::string dir;                // state, spool, logs, pid files and job records live here
  std::vector<int> resource_ids;  // Batsim compute resource ids, one Slurm node each
  int base_port = 0;              // slurmctld listens here, node i's slurmd at base_port + 1 + i
  std::string user = "root";      // SlurmUser / SlurmdUser: the user running vtime
};

// One "Key=Value ..." line of the user's file, with where it came from.
struct ExtraLine {
  std::string key;    // the first key, as written ("SchedulerType", "PartitionName")
  std::string text;   // the whole line, trimmed
  int line = 0;
};

struct Extra {
  std::vector<ExtraLine> lines;
  bool has(std::string_view key) const;  // case-insensitive, like Slurm
};

// Parses the user's EXTRA text (blank lines and '#' comments allowed). Refuses a line that is
// not Key=Value and a key this set-up decides itself, naming the file, line and why.
Result<Extra> parse_extra(std::string_view text, std::string_view file_name);

// The Slurm node name of a Batsim resource id, and back (nullopt for a name that is not ours).
std::string node_name(int resource_id);
std::optional<int> resource_of_node(std::string_view name);

// The whole slurm.conf: generated lines first, each dropped when EXTRA sets the same key (a
// PartitionName line in EXTRA replaces the generated partition), then EXTRA's lines.
std::string make_slurm_conf(const ClusterSpec& c, const Extra& extra);

// Slurm's time limit (whole minutes, rounded up, at least 1) for a Batsim walltime in ns;
// 0 means "no limit" (no walltime, or a negative one).
uint32_t time_limit_minutes(int64_t walltime_ns);

}  // namespace vtime::slurm
