#pragma once
#include <string>
#include <string_view>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// True if an fd's link target is a GPU device node under `dev`: AMD's
// /dev/kfd, NVIDIA's /dev/nvidia<N>, nvidiactl, nvidia-uvm (not /dev/dri,
// which display servers hold too).
bool IsGpuDeviceNode(std::string_view link_target, std::string_view dev);

// gpu_processes: hw_gpu_user_processes, the number of processes holding a
// GPU device node open (from <procfs>/<pid>/fd/*).
class GpuProcessCollector : public Collector {
 public:
  GpuProcessCollector(std::string procfs, std::string dev)
      : procfs_(std::move(procfs)), dev_(std::move(dev)) {}
  Expected<Families> Collect() override;

 private:
  std::string procfs_;
  std::string dev_;
};

}  // namespace jobmon::exporter
