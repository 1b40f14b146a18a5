#pragma once
// A fake AMD GPU sysfs tree, laid out as amdgpu exposes it
// (Documentation/gpu/amdgpu/thermal.rst, driver-misc.rst):
//   devices/pci0000:00/0000:0N:00.0/{gpu_busy_percent,mem_info_vram_used,mem_info_vram_total}
//   devices/pci0000:00/0000:0N:00.0/hwmon/hwmonN/{name,power1_average (uW),temp1_input (m°C)}
//   class/drm/cardN -> ../../devices/pci0000:00/0000:0N:00.0/drm/cardN  (drm/cardN/device -> ../..)
// Files are replaced atomically, so a reader never sees a torn value.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::fake_trainer {

enum class GpuPhase {
  kIdle,        // before compilation, after a clean exit
  kCompiling,   // low utilisation, low power
  kTraining,    // high utilisation, training-level power
  kCheckpoint,  // utilisation dips while writing
  kBusyWait,    // collective hang: 100% utilisation at idle-level power
};

struct GpuReading {
  int busy_percent = 0;
  int64_t power_microwatts = 0;
  int64_t temp_millicelsius = 0;
  int64_t vram_used_bytes = 0;
};

inline constexpr int64_t kVramTotalBytes = 192LL << 30;  // MI300X

// Deterministic for a given rng state.
GpuReading ReadingFor(GpuPhase phase, std::mt19937_64& rng);

class FakeAmdGpuTree {
 public:
  static Expected<FakeAmdGpuTree> Create(const std::string& root, int gpus);
  Expected<void> Write(int gpu, const GpuReading& reading) const;
  int gpus() const { return gpus_; }
  std::string DeviceDir(int gpu) const;

 private:
  FakeAmdGpuTree(std::string root, int gpus) : root_(std::move(root)), gpus_(gpus) {}
  std::string root_;
  int gpus_;
};

}  // namespace jobmon::fake_trainer
