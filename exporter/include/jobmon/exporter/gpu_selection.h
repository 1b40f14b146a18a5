#pragma once
// The GPUs this exporter serves: the job's own on a node it may share with
// other jobs (--gpus, from the prolog), or every GPU of the node.

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// --gpus "0,1,3" (empty: every GPU) and --gpus-source; an error for a
// malformed list, an unknown source, or a list with source "all".
Expected<GpuSelection> ParseGpuSelection(const std::string& gpus, const std::string& source);

// hw_gpu_served{gpu,source,vendor} = 1 for each GPU served of the
// `node_gpus` this collector sees, hw_gpu_node_gpus{vendor} = node_gpus and
// hw_gpu_node_shared{vendor} = 1 when the job has fewer GPUs than the node
// (host-level series are then the node's, not the job's).
void ExportServedGpus(FamilyBuilder& b, const GpuSelection& selection, int node_gpus,
                      const std::string& vendor);

// True when a /proc/<pid>/cgroup text places the process in Slurm job
// `job_id` where Slurm puts a job, from the hierarchy's root (cgroup v1
// /slurm/uid_U/job_J/..., v2 /system.slice/slurmstepd.scope/job_J/...); a
// cgroup named job_J anywhere else (one the job's user made) is not it.
bool CgroupNamesJob(std::string_view cgroup_file, std::string_view job_id);

// The pids of the job's processes, from <procfs>/<pid>/cgroup (readable by
// any user, unlike a job's environ).
std::set<unsigned> JobPids(const std::string& procfs, const std::string& job_id);

}  // namespace jobmon::exporter
