#include "lifecycle/job_env.h"

#include "jobmon/common/hostlist.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::lifecycle {
namespace {

template <typename T>
Expected<T> Number(const GetEnv& getenv, const char* name) {
  const char* text = getenv(name);
  if (!text || !*text) return Error{std::string(name) + " is not set"};
  const std::optional<T> value = WholeNumber<T>(text);
  if (!value) return Error{std::string(name) + "='" + text + "' is not a number"};
  return *value;
}

std::string Text(const GetEnv& getenv, const char* name, const char* fallback = "") {
  const char* text = getenv(name);
  return text && *text ? text : fallback;
}

}  // namespace

Expected<JobEnv> ReadJobEnv(const GetEnv& getenv) {
  JobEnv job;
  auto id = Number<uint32_t>(getenv, "SLURM_JOB_ID");
  if (!id) return id.error();
  job.job_id = *id;
  auto uid = Number<uid_t>(getenv, "SLURM_JOB_UID");
  if (!uid) return uid.error();
  job.uid = *uid;
  auto gid = Number<gid_t>(getenv, "SLURM_JOB_GID");
  job.gid = gid ? *gid : static_cast<gid_t>(-1);  // looked up from the user when absent
  job.user = Text(getenv, "SLURM_JOB_USER");
  job.job_name = Text(getenv, "SLURM_JOB_NAME", "job");
  job.node = Text(getenv, "SLURMD_NODENAME");
  if (job.node.empty()) return Error{"SLURMD_NODENAME is not set"};
  std::string nodelist = Text(getenv, "SLURM_NODELIST");
  if (nodelist.empty()) nodelist = Text(getenv, "SLURM_JOB_NODELIST");
  if (nodelist.empty()) return Error{"SLURM_NODELIST is not set"};
  auto nodes = ExpandHostlist(nodelist);
  if (!nodes) return Error{"SLURM_NODELIST: " + nodes.error().message};
  if (nodes->empty()) return Error{"SLURM_NODELIST is empty"};
  job.nodes = std::move(nodes).value();
  job.stdout_path = Text(getenv, "SLURM_JOB_STDOUT");
  job.work_dir = Text(getenv, "SLURM_JOB_WORK_DIR");
  job.cluster = Text(getenv, "SLURM_CLUSTER_NAME");
  job.slurm_conf = Text(getenv, "SLURM_CONF");
  if (job.slurm_conf.rfind('/', 0) != 0) job.slurm_conf.clear();
  // An array task's ids, where slurmd passes them; malformed ones are ignored
  // (they only refine the %A/%a of an output pattern).
  auto array_job = Number<uint32_t>(getenv, "SLURM_ARRAY_JOB_ID");
  auto array_task = Number<uint32_t>(getenv, "SLURM_ARRAY_TASK_ID");
  if (array_job && array_task) {
    job.array_job_id = *array_job;
    job.array_task_id = *array_task;
  }
  return job;
}

}  // namespace jobmon::lifecycle
