#include "jobmon/monitor/discovery.h"

#include <re2/re2.h>

#include <algorithm>

#include "jobmon/common/slurm_pattern.h"

namespace jobmon::monitor {

std::string DiagDirFor(const slurm::SlurmJob& job, const std::string& pattern) {
  auto dir = slurm_pattern::ExpandDiagDir(pattern, slurm::PatternFields(job),
                                          slurm_pattern::DirectoryOf(job.std_out, job.work_dir));
  return dir ? *dir : "";
}

bool MatchesSelection(const slurm::SlurmJob& job, const JobSelection& s) {
  if (s.Empty()) return false;
  auto in = [](const std::vector<std::string>& list, const std::string& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
  };
  if (!in(s.partitions, job.partition) || !in(s.users, job.user)) return false;
  return s.name_regex.empty() || RE2::FullMatch(job.name, s.NameRegex());
}

std::optional<Discovered> Discover(const slurm::SlurmJob& job, const MonitorConfig& config,
                                   const std::set<uint32_t>& watched,
                                   const std::function<bool(const std::string&)>& has_manifest) {
  if (job.state == "PENDING") return std::nullopt;  // no log, no nodes yet
  Discovered d;
  d.log_path = job.std_out;
  d.diag_dir = DiagDirFor(job, config.diag_dir_pattern);
  if (has_manifest(d.diag_dir)) {
    d.source = "manifest";
  } else if (watched.count(job.job_id)) {
    d.source = "watch";
  } else if (MatchesSelection(job, config.select)) {
    d.source = "config";
  } else {
    return std::nullopt;
  }
  if (d.source != "manifest") d.diag_dir.clear();
  return d;
}

}  // namespace jobmon::monitor
