#include "gpu_sysfs.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "jobmon/common/atomic_file.h"

namespace jobmon::fake_trainer {
namespace fs = std::filesystem;

GpuReading ReadingFor(GpuPhase phase, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> noise(-1.0, 1.0);
  auto around = [&](double center, double spread) { return center + spread * noise(rng); };
  GpuReading r;
  switch (phase) {
    case GpuPhase::kIdle:
      r = {0, static_cast<int64_t>(around(140, 5) * 1e6), static_cast<int64_t>(around(38, 1) * 1e3),
           512LL << 20};
      break;
    case GpuPhase::kCompiling:
      r = {static_cast<int>(around(15, 10)), static_cast<int64_t>(around(190, 15) * 1e6),
           static_cast<int64_t>(around(45, 2) * 1e3), 8LL << 30};
      break;
    case GpuPhase::kTraining:
      r = {static_cast<int>(around(97, 3)), static_cast<int64_t>(around(660, 40) * 1e6),
           static_cast<int64_t>(around(74, 3) * 1e3), 150LL << 30};
      break;
    case GpuPhase::kCheckpoint:
      r = {static_cast<int>(around(35, 15)), static_cast<int64_t>(around(330, 30) * 1e6),
           static_cast<int64_t>(around(65, 3) * 1e3), 150LL << 30};
      break;
    case GpuPhase::kBusyWait:
      r = {100, static_cast<int64_t>(around(300, 10) * 1e6),
           static_cast<int64_t>(around(55, 2) * 1e3), 150LL << 30};
      break;
  }
  if (r.busy_percent < 0) r.busy_percent = 0;
  if (r.busy_percent > 100) r.busy_percent = 100;
  return r;
}

namespace {

Expected<void> EnsureLink(const fs::path& target, const fs::path& link) {
  std::error_code ec;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fs::read_symlink(link, ec) == target) return {};
    fs::remove(link, ec);
    fs::create_directory_symlink(target, link, ec);
    if (!ec) return {};
  }
  if (fs::read_symlink(link, ec) == target) return {};
  return Error{"cannot link " + link.string() + ": " + ec.message()};
}

}  // namespace

std::string FakeAmdGpuTree::DeviceDir(int gpu) const {
  return fmt::format("{}/devices/pci0000:00/0000:{:02x}:00.0", root_, 0x11 + gpu);
}

Expected<FakeAmdGpuTree> FakeAmdGpuTree::Create(const std::string& root, int gpus) {
  FakeAmdGpuTree tree(root, gpus);
  std::error_code ec;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    fs::path device = tree.DeviceDir(gpu);
    fs::path hwmon = device / "hwmon" / fmt::format("hwmon{}", gpu);
    fs::path card = device / "drm" / fmt::format("card{}", gpu);
    fs::path class_link = fs::path(root) / "class" / "drm" / fmt::format("card{}", gpu);
    fs::create_directories(hwmon, ec);
    if (!ec) fs::create_directories(card, ec);
    if (!ec) fs::create_directories(class_link.parent_path(), ec);
    if (ec) return Error{"cannot create fake GPU sysfs under " + root + ": " + ec.message()};
    // Two jobs sharing a node share its tree: a link already made (by the
    // other job's trainer, maybe at this moment) is kept, not replaced.
    if (auto w = EnsureLink("../..", card / "device"); !w) return w.error();
    if (auto w = EnsureLink(
            fmt::format("../../devices/pci0000:00/0000:{:02x}:00.0/drm/card{}", 0x11 + gpu, gpu),
            class_link);
        !w) {
      return w.error();
    }
    for (auto [file, content] :
         {std::pair{hwmon / "name", "amdgpu\n"}, std::pair{device / "vendor", "0x1002\n"},
          std::pair{device / "device", "0x74a1\n"}}) {
      if (auto w = WriteFileAtomically(file.string(), content); !w) return w.error();
    }
    if (auto w = WriteFileAtomically((device / "mem_info_vram_total").string(),
                                     fmt::format("{}\n", kVramTotalBytes));
        !w) {
      return w.error();
    }
  }
  return tree;
}

Expected<void> FakeAmdGpuTree::Write(int gpu, const GpuReading& reading) const {
  fs::path device = DeviceDir(gpu);
  fs::path hwmon = device / "hwmon" / fmt::format("hwmon{}", gpu);
  const std::pair<fs::path, std::string> files[] = {
      {device / "gpu_busy_percent", fmt::format("{}\n", reading.busy_percent)},
      {device / "mem_info_vram_used", fmt::format("{}\n", reading.vram_used_bytes)},
      {hwmon / "power1_average", fmt::format("{}\n", reading.power_microwatts)},
      {hwmon / "temp1_input", fmt::format("{}\n", reading.temp_millicelsius)},
  };
  for (const auto& [file, content] : files) {
    if (auto w = WriteFileAtomically(file.string(), content); !w) return w.error();
  }
  return {};
}

}  // namespace jobmon::fake_trainer
