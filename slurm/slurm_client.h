// The few libslurm calls vtime-slurm makes (libslurm-dev's C API), behind plain C++ types so
// that nothing else includes slurm.h.
//
// Every call is an RPC to slurmctld over loopback: under vtime its waits are virtual, so a
// call costs real time only for the work the daemons do.
//
// Example:
//     SlurmClient client(dir + "/slurm.conf");
//     while (!client.ping()) usleep(10000);
//     auto id = client.submit({.name = "w0!1", .nodes = 4, .time_limit_min = 2, ...});
#pragma once

#include <vtime/protocol/result.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vtime::slurm {

struct JobRequest {
  std::string name;        // shown by squeue; the Batsim id, made safe
  std::string comment;     // the Batsim id exactly
  uint32_t nodes = 1;
  uint32_t time_limit_min = 0;  // 0: none
  std::string script;
  std::string work_dir;
  std::vector<std::string> environment;  // "K=V"
};

class SlurmClient {
 public:
  explicit SlurmClient(const std::string& conf_path);
  ~SlurmClient();
  SlurmClient(const SlurmClient&) = delete;
  SlurmClient& operator=(const SlurmClient&) = delete;

  // slurmctld answers.
  bool ping();
  // How many nodes are idle and responding; -1 if slurmctld did not answer.
  int idle_nodes();
  // The Slurm job id, or Slurm's reason for refusing the job.
  protocol::Result<uint32_t> submit(const JobRequest& job);
  // Asks slurmctld to shut down with every slurmd. false if it could not be asked.
  bool shutdown();

  // Slurm's hostlist expression ("n[0-3,7]") as node names, in Slurm's order.
  static std::vector<std::string> expand_hostlist(const std::string& expr);
};

}  // namespace vtime::slurm
