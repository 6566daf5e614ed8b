// libslurm calls (see slurm_client.h).
#include "slurm_client.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdlib.h>
#include <unistd.h>

namespace vtime::slurm {

SlurmClient::SlurmClient(const std::string& conf_path) { slurm_init(conf_path.c_str()); }

SlurmClient::~SlurmClient() { slurm_fini(); }

bool SlurmClient::ping() { return slurm_ping(0) == SLURM_SUCCESS; }

int SlurmClient::idle_nodes() {
  node_info_msg_t* nodes = nullptr;
  if (slurm_load_node(0, &nodes, SHOW_ALL) != SLURM_SUCCESS || !nodes) return -1;
  int idle = 0;
  for (uint32_t i = 0; i < nodes->record_count; ++i) {
    uint32_t st = nodes->node_array[i].node_state;
    // Idle and nothing else: not NOT_RESPONDING, not DRAIN, not still booting.
    if ((st & NODE_STATE_BASE) == NODE_STATE_IDLE && (st & NODE_STATE_FLAGS) == 0) ++idle;
  }
  slurm_free_node_info_msg(nodes);
  return idle;
}

protocol::Result<uint32_t> SlurmClient::submit(const JobRequest& job) {
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  std::string name = job.name, comment = job.comment, script = job.script, work_dir = job.work_dir;
  std::string out = "/dev/null";
  d.name = name.data();
  d.comment = comment.data();
  d.min_nodes = job.nodes;
  d.max_nodes = job.nodes;
  if (job.time_limit_min > 0) d.time_limit = job.time_limit_min;
  d.script = script.data();
  d.work_dir = work_dir.data();
  d.std_out = out.data();
  d.std_err = out.data();
  d.user_id = getuid();
  d.group_id = getgid();
  std::vector<char*> env;
  for (auto& e : job.environment) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  d.environment = env.data();
  d.env_size = static_cast<uint32_t>(job.environment.size());
  submit_response_msg_t* resp = nullptr;
  if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS || !resp) {
    int e = slurm_get_errno();
    if (resp) slurm_free_submit_response_response_msg(resp);
    return protocol::Error{slurm_strerror(e)};
  }
  uint32_t id = resp->job_id;
  slurm_free_submit_response_response_msg(resp);
  return id;
}

bool SlurmClient::shutdown() { return slurm_shutdown(0) == SLURM_SUCCESS; }

std::vector<std::string> SlurmClient::expand_hostlist(const std::string& expr) {
  std::vector<std::string> out;
  hostlist_t hl = slurm_hostlist_create(expr.c_str());
  if (!hl) return out;
  while (char* h = slurm_hostlist_shift(hl)) {
    out.emplace_back(h);
    free(h);
  }
  slurm_hostlist_destroy(hl);
  return out;
}

}  // namespace vtime::slurm
