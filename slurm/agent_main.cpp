// vtime-slurm-agent: the interpreter of every job script vtime-slurm submits (agent_link.h).
// A separate, small executable: Slurm starts one per job, and the bridge's own executable links
// libslurm and ZeroMQ, whose loading made up most of a job process's start-up. Not for users.
#include "agent_link.h"

int main() { return vtime::slurm::job_agent_main(); }
