// The served GPU set, its series, and the job's processes by cgroup.
#include "jobmon/exporter/gpu_selection.h"

#include <dirent.h>

#include <algorithm>
#include <charconv>

#include "jobmon/common/metric_names.h"

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

bool CgroupNamesJob(std::string_view cgroup_file, std::string_view job_id) {
  if (job_id.empty()) return false;
  const std::string component = "/job_" + std::string(job_id);
  for (size_t pos = cgroup_file.find(component); pos != cgroup_file.npos;
       pos = cgroup_file.find(component, pos + 1)) {
    size_t end = pos + component.size();
    if (end == cgroup_file.size() || cgroup_file[end] == '/' || cgroup_file[end] == '\n') {
      return true;
    }
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
