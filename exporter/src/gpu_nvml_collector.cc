// gpu_nvml: NVIDIA GPUs through libnvidia-ml, loaded at run time.
#include "jobmon/exporter/gpu_nvml_collector.h"

#include <dlfcn.h>

#include "nvml_api.h"

namespace jobmon::exporter {

class NvmlLibrary {
 public:
  nvml::ErrorStringFn error_string = nullptr;
  nvml::GetCountFn get_count = nullptr;
  nvml::GetHandleByIndexFn get_handle = nullptr;
  nvml::GetUtilizationRatesFn utilization = nullptr;
  nvml::GetPowerUsageFn power = nullptr;
  nvml::GetTemperatureFn temperature = nullptr;
  nvml::GetClockInfoFn clock = nullptr;
  nvml::GetMemoryInfoFn memory = nullptr;
  nvml::GetTotalEccErrorsFn ecc = nullptr;
  nvml::GetPcieReplayCounterFn pcie_replay = nullptr;
  nvml::GetThrottleReasonsFn throttle = nullptr;

  std::string Describe(nvml::Return code) const {
    const char* text = error_string ? error_string(code) : nullptr;
    return text ? text : "NVML error " + std::to_string(code);
  }
};

namespace {

template <typename Fn>
Fn Symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

Expected<std::shared_ptr<NvmlLibrary>> LoadNvml(const std::string& path) {
  // Never dlclose'd: the driver library keeps threads and state of its own.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return Error{"cannot load " + path + (why ? std::string(": ") + why : "")};
  }
  auto lib = std::make_shared<NvmlLibrary>();
  auto init = Symbol<nvml::InitFn>(handle, "nvmlInit_v2");
  lib->error_string = Symbol<nvml::ErrorStringFn>(handle, "nvmlErrorString");
  lib->get_count = Symbol<nvml::GetCountFn>(handle, "nvmlDeviceGetCount_v2");
  lib->get_handle = Symbol<nvml::GetHandleByIndexFn>(handle, "nvmlDeviceGetHandleByIndex_v2");
  if (!init || !lib->get_count || !lib->get_handle) {
    return Error{path + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2"};
  }
  lib->utilization = Symbol<nvml::GetUtilizationRatesFn>(handle, "nvmlDeviceGetUtilizationRates");
  lib->power = Symbol<nvml::GetPowerUsageFn>(handle, "nvmlDeviceGetPowerUsage");
  lib->temperature = Symbol<nvml::GetTemperatureFn>(handle, "nvmlDeviceGetTemperature");
  lib->clock = Symbol<nvml::GetClockInfoFn>(handle, "nvmlDeviceGetClockInfo");
  lib->memory = Symbol<nvml::GetMemoryInfoFn>(handle, "nvmlDeviceGetMemoryInfo");
  lib->ecc = Symbol<nvml::GetTotalEccErrorsFn>(handle, "nvmlDeviceGetTotalEccErrors");
  lib->pcie_replay = Symbol<nvml::GetPcieReplayCounterFn>(handle, "nvmlDeviceGetPcieReplayCounter");
  lib->throttle =
      Symbol<nvml::GetThrottleReasonsFn>(handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (nvml::Return rc = init(); rc != nvml::kSuccess) {
    return Error{"nvmlInit: " + lib->Describe(rc)};
  }
  unsigned int count = 0;
  if (nvml::Return rc = lib->get_count(&count); rc != nvml::kSuccess) {
    return Error{"nvmlDeviceGetCount: " + lib->Describe(rc)};
  }
  if (count == 0) return Error{"no NVIDIA GPU"};
  return lib;
}

Expected<Families> GpuNvmlCollector::Collect() {
  if (!nvml_) return Error{"NVML is not loaded"};
  const NvmlLibrary& lib = *nvml_;
  unsigned int count = 0;
  if (nvml::Return rc = lib.get_count(&count); rc != nvml::kSuccess) {
    return Error{"nvmlDeviceGetCount: " + lib.Describe(rc)};
  }
  FamilyBuilder b;
  for (unsigned int index = 0; index < count; ++index) {
    nvml::Device device = nullptr;
    if (nvml::Return rc = lib.get_handle(index, &device); rc != nvml::kSuccess) {
      // A GPU that fell off the bus: the others still report.
      continue;
    }
    const Labels gpu{{"gpu", std::to_string(index)}};
    auto ok = [](nvml::Return rc) { return rc == nvml::kSuccess; };
    nvml::Utilization utilization{};
    if (lib.utilization && ok(lib.utilization(device, &utilization))) {
      b.Gauge("hw_gpu_utilization_percent", "GPU busy percent", gpu, utilization.gpu);
      b.Gauge("hw_gpu_memory_utilization_percent", "Percent of time device memory was accessed",
              gpu, utilization.memory);
    }
    unsigned int milliwatts = 0;
    if (lib.power && ok(lib.power(device, &milliwatts))) {
      b.Gauge("hw_gpu_power_watts", "Power draw", gpu, milliwatts / 1000.0);
    }
    unsigned int celsius = 0;
    if (lib.temperature && ok(lib.temperature(device, nvml::kTemperatureGpu, &celsius))) {
      b.Gauge("hw_gpu_temperature_celsius", "GPU die temperature", gpu, celsius);
    }
    for (auto [type, nvml_clock] : {std::pair{"sclk", nvml::kClockSm}, {"mclk", nvml::kClockMem}}) {
      unsigned int mhz = 0;
      if (lib.clock && ok(lib.clock(device, nvml_clock, &mhz))) {
        Labels l = gpu;
        l["type"] = type;
        b.Gauge("hw_gpu_clock_mhz", "Clock (sclk=SM/core, mclk=memory)", l, mhz);
      }
    }
    nvml::Memory memory{};
    if (lib.memory && ok(lib.memory(device, &memory))) {
      b.Gauge("hw_gpu_vram_used_bytes", "VRAM used", gpu, static_cast<double>(memory.used));
      b.Gauge("hw_gpu_vram_total_bytes", "VRAM total", gpu, static_cast<double>(memory.total));
    }
    for (auto [error, error_type] :
         {std::pair{"corrected", nvml::kCorrected}, {"uncorrected", nvml::kUncorrected}}) {
      for (auto [counter, counter_type] :
           {std::pair{"volatile", nvml::kVolatileEcc}, {"aggregate", nvml::kAggregateEcc}}) {
        unsigned long long errors = 0;
        if (lib.ecc && ok(lib.ecc(device, error_type, counter_type, &errors))) {
          Labels l = gpu;
          l["error"] = error;
          l["counter"] = counter;
          b.Counter("hw_gpu_ecc_errors_total",
                    "ECC errors (volatile: since driver load; aggregate: lifetime)", l,
                    static_cast<double>(errors));
        }
      }
    }
    unsigned int replays = 0;
    if (lib.pcie_replay && ok(lib.pcie_replay(device, &replays))) {
      b.Counter("hw_gpu_pcie_replay_total", "PCIe replay counter", gpu, replays);
    }
    unsigned long long reasons = 0;
    if (lib.throttle && ok(lib.throttle(device, &reasons))) {
      b.Gauge("hw_gpu_throttle_reasons", "nvmlClocksThrottleReasons bitmask", gpu,
              static_cast<double>(reasons));
      for (const auto& reason : nvml::kThrottleReasons) {
        Labels l = gpu;
        l["reason"] = reason.name;
        b.Gauge("hw_gpu_throttle_active", "1 while the clocks are held back for this reason", l,
                (reasons & reason.bit) ? 1 : 0);
      }
    }
  }
  return b.Take();
}

}  // namespace jobmon::exporter
