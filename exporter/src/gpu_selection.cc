// The served GPU set, its series, and the job's processes by cgroup.
#include "jobmon/exporter/gpu_selection.h"

#include <dirent.h>

#include <algorithm>
#include <charconv>
#include <vector>

#include "jobmon/common/metric_names.h"
#include "jobmon/common/text_lines.h"

namespace jobmon::exporter {

Expected<GpuSelection> ParseGpuSelection(const std::string& gpus, const std::string& source) {
  GpuSelection selection;
  if (source != "slurm" && source != "cgroup" && source != "all") {
    return Error{"--gpus-source must be slurm, cgroup or all, not '" + source + "'"};
  }
  selection.source = source;
  if (gpus.empty()) {
    if (source != "all") return Error{"--gpus-source " + source + " needs --gpus"};
    return selection;
  }
  if (source == "all") return Error{"--gpus with --gpus-source all"};
  std::set<int> only;
  std::string_view rest = gpus;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    int gpu = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), gpu);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || gpu < 0) {
      return Error{"--gpus '" + gpus + "' is not a comma-separated list of GPU indices"};
    }
    only.insert(gpu);
    if (comma == rest.npos) break;
    rest.remove_prefix(comma + 1);
  }
  selection.only = std::move(only);
  return selection;
}

void ExportServedGpus(FamilyBuilder& b, const GpuSelection& selection, int node_gpus,
                      const std::string& vendor) {
  int served = 0;
  for (int gpu = 0; gpu < node_gpus; ++gpu) {
    if (!selection.Serves(gpu)) continue;
    ++served;
    b.Gauge(metric_names::kGpuServed, "1 for each GPU this exporter serves (the job's own)",
            {{"gpu", std::to_string(gpu)}, {"source", selection.source}, {"vendor", vendor}}, 1);
  }
  b.Gauge(metric_names::kGpuNodeGpus, "GPUs on the node", {{"vendor", vendor}}, node_gpus);
  b.Gauge(metric_names::kGpuNodeShared,
          "1 when the job has fewer GPUs than the node: host-level series are node-wide",
          {{"vendor", vendor}}, served < node_gpus ? 1 : 0);
}

namespace {

// A cgroup path's components, "/a/b/" as {"a", "b"}.
std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    if (slash != 0) out.push_back(path.substr(0, slash));
    if (slash == path.npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Only where Slurm itself puts a job, from the root of the hierarchy: the
// job's user may create cgroups below its own (a delegated subtree, a
// systemd user service) and name one job_<id> anywhere else.
// v2: /system.slice/[<node>_]slurmstepd.scope/job_J (Slurm 22.05+
// src/plugins/cgroup/v2/cgroup_v2.c; the node prefix with multiple slurmd);
// v1: /<prepend: slurm or slurm_<node>>/uid_U/job_J
// (src/plugins/cgroup/v1/xcgroup.c).
bool IsSlurmJobPath(std::string_view path, std::string_view job_component) {
  const std::vector<std::string_view> c = Components(path);
  if (c.size() < 3 || c[2] != job_component) return false;
  const bool v2 =
      c[0] == "system.slice" && (c[1] == "slurmstepd.scope" || c[1].ends_with("_slurmstepd.scope"));
  const bool v1 = (c[0] == "slurm" || c[0].starts_with("slurm_")) && c[1].starts_with("uid_") &&
                  IsDigits(c[1].substr(4));
  return v1 || v2;
}

}  // namespace

bool CgroupNamesJob(std::string_view cgroup_file, std::string_view job_id) {
  if (!IsDigits(job_id)) return false;
  const std::string component = "job_" + std::string(job_id);
  // One line per hierarchy: "ID:controllers:path".
  for (std::string_view line : TextLines(cgroup_file)) {
    const size_t first = line.find(':');
    const size_t second = first == line.npos ? line.npos : line.find(':', first + 1);
    if (second != line.npos && IsSlurmJobPath(line.substr(second + 1), component)) return true;
  }
  return false;
}

std::set<unsigned> JobPids(const std::string& procfs, const std::string& job_id) {
  std::set<unsigned> pids;
  if (job_id.empty()) return pids;
  DIR* proc = opendir(procfs.c_str());
  if (!proc) return pids;
  while (dirent* entry = readdir(proc)) {
    std::string_view name = entry->d_name;
    unsigned pid = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (name.empty() || ec != std::errc() || end != name.data() + name.size()) continue;
    auto text = ReadSmallFile(procfs + "/" + std::string(name) + "/cgroup", 64 << 10);
    if (text && CgroupNamesJob(*text, job_id)) pids.insert(pid);
  }
  closedir(proc);
  return pids;
}

}  // namespace jobmon::exporter
