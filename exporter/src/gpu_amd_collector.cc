// gpu_amd: amdgpu sysfs.
#include "jobmon/exporter/gpu_amd_collector.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "jobmon/common/metric_names.h"
#include "jobmon/exporter/gpu_selection.h"

namespace jobmon::exporter {
namespace fs = std::filesystem;

namespace {

bool IsCardName(const std::string& name) {
  return name.size() > 4 && name.rfind("card", 0) == 0 &&
         std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<fs::path> Hwmon(const fs::path& device) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(device / "hwmon", ec))
    dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) return std::nullopt;
  return dirs.front();
}

}  // namespace

std::optional<double> ParseCurrentDpmMhz(std::string_view text) {
  size_t star = text.find('*');
  if (star == text.npos) return std::nullopt;
  size_t line_start = text.rfind('\n', star);
  line_start = line_start == text.npos ? 0 : line_start + 1;
  std::string_view line = text.substr(line_start, star - line_start);
  size_t colon = line.find(':');
  if (colon == line.npos) return std::nullopt;
  line.remove_prefix(colon + 1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  double mhz = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), mhz);
  if (ec != std::errc() || std::string_view(end, 3) != "Mhz") return std::nullopt;
  return mhz;
}

std::optional<std::pair<uint64_t, uint64_t>> ParseRasCount(std::string_view text) {
  auto value = [&](std::string_view key) -> std::optional<uint64_t> {
    size_t pos = text.find(key);
    if (pos == text.npos) return std::nullopt;
    std::string_view rest = text.substr(pos + key.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    // amdgpu_ras.c prints "ue: %lu\nce: %lu\n": the number ends the line.
    if (ec != std::errc() || (end != rest.data() + rest.size() && *end != '\n')) {
      return std::nullopt;
    }
    return v;
  };
  auto ue = value("ue:"), ce = value("ce:");
  if (!ue || !ce) return std::nullopt;
  return std::pair{*ue, *ce};
}

std::optional<uint64_t> ParseAerTotal(std::string_view text) {
  size_t pos = text.find("TOTAL_ERR_");
  if (pos == text.npos) return std::nullopt;
  size_t space = text.find(' ', pos);
  if (space == text.npos) return std::nullopt;
  std::string_view rest = text.substr(space + 1);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc() || (end != rest.data() + rest.size() && *end != '\n')) return std::nullopt;
  return v;
}

Expected<Families> GpuAmdCollector::Collect() {
  std::error_code ec;
  fs::path drm = fs::path(sysfs_) / "class" / "drm";
  std::vector<std::pair<std::string, fs::path>> gpus;  // PCI address, device dir
  for (const auto& entry : fs::directory_iterator(drm, ec)) {
    std::string name = entry.path().filename().string();
    if (!IsCardName(name)) continue;
    fs::path device = fs::canonical(entry.path() / "device", ec);
    if (ec) continue;
    auto vendor = ReadSmallFile((device / "vendor").string(), 64);
    if (!vendor || vendor->rfind("0x1002", 0) != 0) continue;
    gpus.push_back({device.filename().string(), device});
  }
  std::sort(gpus.begin(), gpus.end());
  FamilyBuilder b;
  // A broken file drops its own series and is a problem; an absent one is
  // skipped (not every GPU has every file).
  auto unsigned_value = [&](const fs::path& path) -> std::optional<double> {
    auto value = ReadCounterFile(path.string());
    if (!value) Problem(value.error().message);
    if (!value || !*value) return std::nullopt;
    return static_cast<double>(**value);
  };
  auto signed_value = [&](const fs::path& path) -> std::optional<double> {
    auto value = ReadIntegerFile(path.string());
    if (!value) Problem(value.error().message);
    if (!value || !*value) return std::nullopt;
    return static_cast<double>(**value);
  };
  // Multi-line files (ras, AER): absent is skipped, unparsable a problem.
  auto parsed = [&]<typename T>(const fs::path& path,
                                std::optional<T> (*parse)(std::string_view)) -> std::optional<T> {
    auto text = ReadSmallFile(path.string(), 8192);
    if (!text) return std::nullopt;
    auto value = parse(*text);
    if (!value) Problem(path.string() + ": not in the driver's format");
    return value;
  };
  if (!gpus.empty()) ExportServedGpus(b, selection_, static_cast<int>(gpus.size()), "amd");
  for (size_t index = 0; index < gpus.size(); ++index) {
    if (!selection_.Serves(static_cast<int>(index))) continue;
    const fs::path& device = gpus[index].second;
    Labels gpu{{"gpu", std::to_string(index)}};
    if (auto busy = signed_value(device / "gpu_busy_percent")) {
      b.Gauge(metric_names::kGpuUtilizationPercent, "GPU busy percent", gpu, *busy);
    }
    if (auto used = unsigned_value(device / "mem_info_vram_used")) {
      b.Gauge(metric_names::kGpuVramUsedBytes, "VRAM used", gpu, *used);
    }
    if (auto total = unsigned_value(device / "mem_info_vram_total")) {
      b.Gauge(metric_names::kGpuVramTotalBytes, "VRAM total", gpu, *total);
    }
    if (auto hwmon = Hwmon(device)) {
      auto power = unsigned_value(*hwmon / "power1_average");
      if (!power) power = unsigned_value(*hwmon / "power1_input");  // newer kernels
      if (power) b.Gauge(metric_names::kGpuPowerWatts, "Power draw", gpu, *power / 1e6);
      auto temp = signed_value(*hwmon / "temp2_input");        // junction
      if (!temp) temp = signed_value(*hwmon / "temp1_input");  // edge
      if (temp)
        b.Gauge(metric_names::kGpuTemperatureCelsius, "Junction temperature (edge if absent)", gpu,
                *temp / 1000);
    }
    for (const char* type : {"sclk", "mclk"}) {
      auto text = ReadSmallFile((device / (std::string("pp_dpm_") + type)).string(), 4096);
      if (!text) continue;
      if (auto mhz = ParseCurrentDpmMhz(*text)) {
        Labels l = gpu;
        l["type"] = type;
        b.Gauge(metric_names::kGpuClockMhz, "Clock (sclk=core, mclk=memory)", l, *mhz);
      }
    }
    const struct {
      const char* block;
      const char* file;
      const char* ue;  // uncorrectable
      const char* ce;  // correctable
    } ras[] = {
        {"umc", "umc_err_count", metric_names::kGpuRasUmcUeTotal, metric_names::kGpuRasUmcCeTotal},
        {"xgmi", "xgmi_wafl_err_count", metric_names::kGpuRasXgmiUeTotal,
         metric_names::kGpuRasXgmiCeTotal},
        {"gfx", "gfx_err_count", metric_names::kGpuRasGfxUeTotal, metric_names::kGpuRasGfxCeTotal},
        {"mmhub", "mmhub_err_count", metric_names::kGpuRasMmhubUeTotal,
         metric_names::kGpuRasMmhubCeTotal},
        {"sdma", "sdma_err_count", metric_names::kGpuRasSdmaUeTotal,
         metric_names::kGpuRasSdmaCeTotal}};
    for (const auto& [block, file, ue, ce] : ras) {
      if (auto counts = parsed(device / "ras" / file, ParseRasCount)) {
        b.Counter(ue, std::string(block) + " uncorrectable errors", gpu,
                  static_cast<double>(counts->first));
        b.Counter(ce, std::string(block) + " correctable errors", gpu,
                  static_cast<double>(counts->second));
      }
    }
    const std::pair<const char*, const char*> aer[] = {
        {"aer_dev_correctable", metric_names::kGpuPcieCorrectableTotal},
        {"aer_dev_nonfatal", metric_names::kGpuPcieNonfatalTotal},
        {"aer_dev_fatal", metric_names::kGpuPcieFatalTotal}};
    for (const auto& [file, name] : aer) {
      if (auto total = parsed(device / file, ParseAerTotal)) {
        b.Counter(name, "PCIe AER errors", gpu, static_cast<double>(*total));
      }
    }
  }
  return b.Take();
}

}  // namespace jobmon::exporter
