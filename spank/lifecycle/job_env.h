#pragma once
// What slurmd tells the job prolog/epilog about the job, through the
// environment (Slurm 22.05, job_script context; spank_get_item offers only
// uid, gid and job id there).

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::lifecycle {

struct JobEnv {
  uint32_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::string job_name;            // "job" when slurmd does not say
  std::string node;                // SLURMD_NODENAME: this node
  std::vector<std::string> nodes;  // SLURM_NODELIST, expanded, in order
  std::string stdout_path;         // SLURM_JOB_STDOUT (may hold %j patterns)
  std::string work_dir;            // SLURM_JOB_WORK_DIR
  // SLURM_CLUSTER_NAME: slurmd sets it from slurm.conf's ClusterName after
  // merging the job's SPANK environment (slurm src/slurmd/slurmd/req.c,
  // _build_env, 22.05..24.x), so the job cannot choose it. "" if unset.
  std::string cluster;
  // SLURM_CONF: the slurm.conf slurmd reads, set by slurmd after the job's
  // SPANK environment as SLURM_CLUSTER_NAME (22.05..25.11), for the Slurm
  // commands the plugin's daemons run. "" if unset or not an absolute path.
  std::string slurm_conf;
  // SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID of an array task (both or none).
  uint32_t array_job_id = 0;
  std::optional<uint32_t> array_task_id;

  const std::string& head_node() const { return nodes.front(); }
  bool is_head() const { return !nodes.empty() && node == nodes.front(); }
};

using GetEnv = std::function<const char*(const char*)>;

// An error names the missing or malformed variable.
Expected<JobEnv> ReadJobEnv(const GetEnv& getenv);

}  // namespace jobmon::lifecycle
