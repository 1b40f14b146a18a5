#pragma once
#include <memory>
#include <string>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// libnvidia-ml loaded with dlopen and initialised once; shared by every
// gpu_nvml collector instance (a replacement for a stuck one reuses it).
class NvmlLibrary;

// Loads `path` (a soname searched like any dlopen, or a file path) and runs
// nvmlInit. An error says why the collector is off: no library, no driver,
// or no GPU.
Expected<std::shared_ptr<NvmlLibrary>> LoadNvml(const std::string& path);

// gpu_nvml: NVIDIA GPUs under the names gpu_amd uses where the meaning is
// the same (hw_gpu_utilization_percent, hw_gpu_power_watts,
// hw_gpu_temperature_celsius, hw_gpu_clock_mhz{type="sclk"|"mclk"} for SM and
// memory clocks, hw_gpu_vram_{used,total}_bytes), plus
// hw_gpu_memory_utilization_percent, hw_gpu_clock_max_mhz{type},
// hw_gpu_vram_reserved_bytes (v2 memory call; v1 fallback labelled
// source="v1"), hw_gpu_compute_processes and
// hw_gpu_process_vram_used_bytes{pid}, hw_gpu_ecc_errors_total{error,counter},
// hw_gpu_pcie_replay_total, hw_gpu_throttle_reasons (the bitmask),
// hw_gpu_throttle_active{reason} and hw_gpu_power_capped. A value the GPU
// does not support is skipped. Only the selected GPUs are reported (the gpu
// label stays NVML's index), with hw_gpu_served (gpu_selection.h).
//
// With a job id, NVML's per-process accounting cross-checks the selection:
// hw_gpu_job_processes{gpu,served} counts the job's processes (by their
// cgroup, see JobPids) with a compute context on each GPU, served or not,
// and hw_gpu_job_gpus_outside_served the GPUs outside the served set where
// the job runs (0 when the allocation and NVML agree). Absent when no
// process of the job is found (no job cgroup on the node).
class GpuNvmlCollector : public Collector {
 public:
  explicit GpuNvmlCollector(std::shared_ptr<NvmlLibrary> nvml, GpuSelection selection = {},
                            std::string procfs = "/proc", std::string job_id = "")
      : nvml_(std::move(nvml)),
        selection_(std::move(selection)),
        procfs_(std::move(procfs)),
        job_id_(std::move(job_id)) {}
  Expected<Families> Collect() override;

 private:
  std::shared_ptr<NvmlLibrary> nvml_;
  GpuSelection selection_;
  std::string procfs_;
  std::string job_id_;
};

}  // namespace jobmon::exporter
