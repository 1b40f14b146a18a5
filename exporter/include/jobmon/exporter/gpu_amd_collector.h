#pragma once
#include <optional>
#include <string_view>
#include <utility>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// AMD GPUs through amdgpu's sysfs (Documentation/gpu/amdgpu/): cards under
// class/drm/cardN whose device/vendor is 0x1002, numbered by sorted PCI
// address. hw_gpu_utilization_percent, hw_gpu_power_watts,
// hw_gpu_temperature_celsius (junction, else edge), hw_gpu_clock_mhz{type},
// hw_gpu_vram_{used,total}_bytes, hw_gpu_ras_<block>_{ue,ce}_total,
// hw_gpu_pcie_{correctable,nonfatal,fatal}_total. A file a GPU lacks is
// skipped, not an error. Only the selected GPUs are reported (their gpu
// label stays the node's index), with hw_gpu_served (gpu_selection.h).
class GpuAmdCollector : public Collector {
 public:
  explicit GpuAmdCollector(std::string sysfs, GpuSelection selection = {})
      : sysfs_(std::move(sysfs)), selection_(std::move(selection)) {}
  Expected<Families> Collect() override;

 private:
  std::string sysfs_;
  GpuSelection selection_;
};

// "2: 2100Mhz *" lines of pp_dpm_*: the current level's MHz.
std::optional<double> ParseCurrentDpmMhz(std::string_view text);
// "ue: 0\nce: 3" of ras/*_err_count.
std::optional<std::pair<uint64_t, uint64_t>> ParseRasCount(std::string_view text);
// The TOTAL_ERR_* line of aer_dev_*.
std::optional<uint64_t> ParseAerTotal(std::string_view text);

}  // namespace jobmon::exporter
