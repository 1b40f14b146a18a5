#include "lifecycle/diag_paths.h"

namespace jobmon::lifecycle {

slurm_pattern::JobFields PatternFields(const JobEnv& job) {
  return {.job_id = job.job_id,
          .array_job_id = job.array_task_id ? job.array_job_id : 0,
          .array_task_id = job.array_task_id,
          .user = job.user,
          .name = job.job_name,
          .batch_host = job.head_node(),
          .work_dir = job.work_dir.empty() ? "/tmp" : job.work_dir};
}

std::string StdoutDirectory(const JobEnv& job) {
  const auto fields = PatternFields(job);
  return slurm_pattern::DirectoryOf(slurm_pattern::StdoutPath(job.stdout_path, fields),
                                    fields.work_dir);
}

std::string StdoutPath(const JobEnv& job) {
  return slurm_pattern::StdoutPath(job.stdout_path, PatternFields(job));
}

Expected<DiagLayout> DiagLayoutFor(const PluginConfig& config, const JobEnv& job) {
  auto expanded =
      slurm_pattern::ExpandDiagDir(config.diag_dir, PatternFields(job), StdoutDirectory(job));
  if (!expanded) return Error{"diag_dir: " + expanded.error().message};
  std::string dir = *expanded;
  if (dir.empty() || dir.front() != '/') {
    return Error{"diag_dir '" + dir + "' is not an absolute path"};
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return DiagLayout{dir};
}

RunDir RunDirFor(const PluginConfig& config, const std::string& node, uint32_t job_id) {
  std::string node_dir = config.run_dir + "/" + node;
  return RunDir{node_dir + "/" + std::to_string(job_id), node_dir};
}

Expected<std::string> ExpandNodePattern(const std::string& pattern, const DiagLayout& layout,
                                        const JobEnv& job) {
  return slurm_pattern::ExpandLetters(
      pattern, {{'d', layout.dir}, {'n', job.node}, {'j', std::to_string(job.job_id)}});
}

}  // namespace jobmon::lifecycle
