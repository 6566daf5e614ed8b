// The bridge's end of the link to job agents.
//
// What it is for: every Slurm job runs one job agent (`vtime-slurm --job-agent`, the
// interpreter of the job's script). As soon as Slurm starts the job, the agent connects to the
// bridge over a Unix socket in the abstract namespace and says which job it is and on which
// nodes Slurm put it; it then blocks until the bridge tells it to end, when Batsim says the job
// is over. So Slurm sees each job start and end at the virtual instants Batsim decides, and the
// bridge hears of a start without asking slurmctld anything.
//
// Lines on the socket (one per message, '\n'-terminated):
//   agent -> bridge: "start SLURM_JOB_ID NODELIST"   Slurm started the job on NODELIST
//                    "killed SLURM_JOB_ID"           Slurm signalled the job (time limit, scancel)
//   bridge -> agent: "end CODE"                      exit with CODE now
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vtime::slurm {

inline constexpr const char* kAgentSocketEnv = "VTIME_SLURM_AGENT";
// Nanoseconds the agent waits (virtual time) before it reports its start: the real job's launch.
inline constexpr const char* kAgentStartLatencyEnv = "VTIME_SLURM_JOB_START_NS";

struct AgentReport {
  enum Kind { kStarted, kKilled, kBroken } kind = kBroken;
  uint32_t slurm_id = 0;
  std::string nodelist;  // kStarted
  std::string text;      // kBroken: what was wrong
};

class AgentLink {
 public:
  // Listens on the abstract socket `name` (no file, gone with the process).
  explicit AgentLink(const std::string& name);
  ~AgentLink();
  AgentLink(const AgentLink&) = delete;
  AgentLink& operator=(const AgentLink&) = delete;

  int listen_fd() const { return listen_fd_; }
  std::vector<int> agent_fds() const;
  // Takes every pending connection.
  void accept_all();
  // Reads what the agent on `fd` sent; a closed connection is forgotten.
  std::vector<AgentReport> read(int fd);
  // Tells the agent of this job to exit with `code`. false when it is not connected.
  bool end(uint32_t slurm_id, int code);

 private:
  struct Conn {
    std::string buf;
    uint32_t slurm_id = 0;  // 0 until its start line
  };
  int listen_fd_ = -1;
  std::map<int, Conn> conns_;
};

// The agent process: run as the interpreter of a job's script ("#!vtime-slurm --job-agent").
// Returns its exit code.
int job_agent_main();

}  // namespace vtime::slurm
