#include "lifecycle/diag_paths.h"

namespace jobmon::lifecycle {

Expected<std::string> ExpandPattern(const std::string& pattern,
                                    const std::map<char, std::string>& vars) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 >= pattern.size()) return Error{"'" + pattern + "' ends in a lone %"};
    char letter = pattern[++i];
    if (letter == '%') {
      out += '%';
      continue;
    }
    auto it = vars.find(letter);
    if (it == vars.end()) {
      return Error{"'" + pattern + "': unknown pattern %" + std::string(1, letter)};
    }
    out += it->second;
  }
  return out;
}

std::string StdoutDirectory(const JobEnv& job) {
  std::string fallback = job.work_dir.empty() ? "/tmp" : job.work_dir;
  if (job.stdout_path.empty()) return fallback;
  size_t slash = job.stdout_path.rfind('/');
  if (slash == std::string::npos) return fallback;  // relative to the work dir
  std::string dir = slash == 0 ? "/" : job.stdout_path.substr(0, slash);
  std::string id = std::to_string(job.job_id);
  auto expanded = ExpandPattern(
      dir, {{'j', id}, {'A', id}, {'u', job.user}, {'x', job.job_name}, {'N', job.head_node()}});
  if (!expanded) return fallback;
  if (expanded->front() != '/') return job.work_dir + "/" + *expanded;
  return *expanded;
}

std::string StdoutPath(const JobEnv& job) {
  std::string id = std::to_string(job.job_id);
  // Slurm's default for a batch job without --output.
  std::string pattern = job.stdout_path.empty() ? "slurm-%j.out" : job.stdout_path;
  auto expanded = ExpandPattern(
      pattern,
      {{'j', id}, {'A', id}, {'u', job.user}, {'x', job.job_name}, {'N', job.head_node()}});
  // Per-task or per-node patterns (%t, %n, %s...) name no single file.
  if (!expanded || expanded->empty()) return {};
  if (expanded->front() != '/')
    return (job.work_dir.empty() ? "/tmp" : job.work_dir) + "/" + *expanded;
  return *expanded;
}

Expected<DiagLayout> DiagLayoutFor(const PluginConfig& config, const JobEnv& job) {
  auto expanded = ExpandPattern(config.diag_dir, {{'j', std::to_string(job.job_id)},
                                                  {'u', job.user},
                                                  {'x', job.job_name},
                                                  {'o', StdoutDirectory(job)}});
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
  return ExpandPattern(pattern,
                       {{'d', layout.dir}, {'n', job.node}, {'j', std::to_string(job.job_id)}});
}

}  // namespace jobmon::lifecycle
