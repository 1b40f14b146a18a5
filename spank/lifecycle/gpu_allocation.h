#pragma once
// The GPUs a job was given on this node, as the job prolog can learn them,
// and the exporter arguments that pass them on. A missing or malformed
// allocation never stops the job: the exporter then serves every GPU and
// says so (source "all").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lifecycle/job_env.h"

namespace jobmon::lifecycle {

// Where the served set came from, as the exporter labels it.
inline constexpr const char* kGpuSourceSlurm = "slurm";
inline constexpr const char* kGpuSourceCgroup = "cgroup";
inline constexpr const char* kGpuSourceAll = "all";

struct GpuAllocation {
  std::vector<int> gpus;  // sorted, unique; empty with source "all"
  std::string source = kGpuSourceAll;
  std::vector<std::string> notes;  // for the log: why "all", or disagreements
};

// "0,1,3": Slurm's GPU indices (SLURM_JOB_GPUS is "%d" joined with ",",
// slurm 22.05 src/plugins/gres/common/gres_common.c,
// gres_common_epilog_set_env). nullopt for anything else (UUIDs, MIG names,
// an empty list).
std::optional<std::vector<int>> ParseGpuIndexList(std::string_view text);

// One line of a cgroup v1 devices.list: "c 195:0 rw", "a *:* rwm"
// (linux security/device_cgroup.c, devcgroup_seq_show: "%c %s:%s %s").
// -1 stands for "*".
struct DeviceRule {
  char type = 'a';  // a(ll), b(lock), c(har)
  long major = -1;
  long minor = -1;
  std::string access;
};
// nullopt when a line does not have that shape.
std::optional<std::vector<DeviceRule>> ParseDevicesList(std::string_view text);

// A GPU device node of this node and the GPU index it stands for
// (/dev/nvidiaN: N; /dev/dri/renderD(128+N): N).
struct GpuDeviceNode {
  int index = 0;
  long major = 0;
  long minor = 0;
};
// The GPUs whose device node the rules allow; nullopt when the rules do not
// restrict GPUs (an "a *:*" rule, a wildcard over a GPU's major, or no GPU
// device node known).
std::optional<std::vector<int>> GpusAllowed(const std::vector<DeviceRule>& rules,
                                            const std::vector<GpuDeviceNode>& node_gpus);

// Slurm's allocation from the prolog environment first (SLURM_JOB_GPUS,
// else a numeric CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES /
// GPU_DEVICE_ORDINAL: the same gres_common_epilog_set_env writes them, with
// the device index unless gres.conf gives a unique id); else the job's
// cgroup v1 device list; else every GPU. `devices_list` is the cgroup
// file's content when there is one (cgroup v2 keeps the device rules in a
// BPF program: nothing to read).
GpuAllocation DecideGpuAllocation(const GetEnv& getenv,
                                  const std::optional<std::string>& devices_list,
                                  const std::vector<GpuDeviceNode>& node_gpus);

// The exporter's arguments: --gpus-source SOURCE [--gpus 0,1].
std::vector<std::string> ExporterGpuArgs(const GpuAllocation& allocation);

// The cgroup v1 devices.list of a job, as Slurm 22.05's task/cgroup lays it
// out (src/plugins/cgroup/v1/xcgroup.c: <prepend>/uid_<uid>/job_<id>, with
// CgroupPrepend "/slurm"): <cgroup_root>/devices/slurm/uid_U/job_J/devices.list.
std::string JobDevicesListPath(const std::string& cgroup_root, uid_t uid, uint32_t job_id);

// The node's GPU device nodes under `dev` (stat: major and minor numbers).
std::vector<GpuDeviceNode> ListGpuDeviceNodes(const std::string& dev);

}  // namespace jobmon::lifecycle
