// gpu_nvml: NVIDIA GPUs through libnvidia-ml, loaded at run time.
#include "jobmon/exporter/gpu_nvml_collector.h"

#include <dlfcn.h>

#include <optional>
#include <set>
#include <vector>

#include "jobmon/common/metric_names.h"
#include "jobmon/exporter/gpu_selection.h"
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
  nvml::GetClockInfoFn max_clock = nullptr;
  nvml::GetMemoryInfoFn memory = nullptr;
  nvml::GetMemoryInfoV2Fn memory_v2 = nullptr;    // null: driver older than the v2 call
  nvml::GetProcessesV2Fn processes_v2 = nullptr;  // _v3, else _v2: nvmlProcessInfo_v2_t
  nvml::GetProcessesV1Fn processes_v1 = nullptr;  // unversioned: nvmlProcessInfo_v1_t
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
  lib->max_clock = Symbol<nvml::GetClockInfoFn>(handle, "nvmlDeviceGetMaxClockInfo");
  lib->memory = Symbol<nvml::GetMemoryInfoFn>(handle, "nvmlDeviceGetMemoryInfo");
  lib->memory_v2 = Symbol<nvml::GetMemoryInfoV2Fn>(handle, "nvmlDeviceGetMemoryInfo_v2");
  lib->processes_v2 =
      Symbol<nvml::GetProcessesV2Fn>(handle, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!lib->processes_v2) {
    lib->processes_v2 =
        Symbol<nvml::GetProcessesV2Fn>(handle, "nvmlDeviceGetComputeRunningProcesses_v2");
  }
  if (!lib->processes_v2) {
    lib->processes_v1 =
        Symbol<nvml::GetProcessesV1Fn>(handle, "nvmlDeviceGetComputeRunningProcesses");
  }
  lib->ecc = Symbol<nvml::GetTotalEccErrorsFn>(handle, "nvmlDeviceGetTotalEccErrors");
  lib->pcie_replay = Symbol<nvml::GetPcieReplayCounterFn>(handle, "nvmlDeviceGetPcieReplayCounter");
  // Renamed in NVML 12.x; the old name is deprecated, and may go.
  lib->throttle =
      Symbol<nvml::GetThrottleReasonsFn>(handle, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!lib->throttle) {
    lib->throttle =
        Symbol<nvml::GetThrottleReasonsFn>(handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
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

namespace {

struct GpuProcess {
  unsigned int pid;
  unsigned long long used_bytes;
};

// NVML's two-call pattern: ask with room for none, then with the count it
// gave (plus headroom: processes start between the calls); INSUFFICIENT_SIZE
// again means more started, so ask again, a few times at most.
template <typename Info, typename Fn>
std::optional<std::vector<GpuProcess>> QueryProcesses(Fn fn, nvml::Device device) {
  unsigned int count = 0;
  nvml::Return rc = fn(device, &count, nullptr);
  if (rc == nvml::kSuccess) return std::vector<GpuProcess>{};
  for (int attempt = 0; attempt < 3 && rc == nvml::kInsufficientSize; ++attempt) {
    std::vector<Info> infos(count + 4);
    count = static_cast<unsigned int>(infos.size());
    rc = fn(device, &count, infos.data());
    if (rc == nvml::kSuccess) {
      std::vector<GpuProcess> out;
      for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
        out.push_back({infos[i].pid, infos[i].usedGpuMemory});
      }
      return out;
    }
  }
  return std::nullopt;
}

std::optional<std::vector<GpuProcess>> ComputeProcesses(const NvmlLibrary& lib,
                                                        nvml::Device device) {
  if (lib.processes_v2) return QueryProcesses<nvml::ProcessInfoV2>(lib.processes_v2, device);
  if (lib.processes_v1) return QueryProcesses<nvml::ProcessInfoV1>(lib.processes_v1, device);
  return std::nullopt;
}

// VRAM from nvmlDeviceGetMemoryInfo_v2, whose `used` leaves out the
// driver's reserved memory (the v1 call counts it: ~480 MiB more than
// nvidia-smi shows on an H100). A driver without the v2 call, or one that
// refuses its version, gets v1, and the series say so with source="v1".
void ExportMemory(const NvmlLibrary& lib, nvml::Device device, const Labels& gpu,
                  FamilyBuilder& b) {
  if (lib.memory_v2) {
    nvml::MemoryV2 memory{};
    memory.version = nvml::kMemoryV2Version;
    nvml::Return rc = lib.memory_v2(device, &memory);
    if (rc == nvml::kSuccess) {
      b.Gauge(metric_names::kGpuVramUsedBytes, "VRAM used", gpu, static_cast<double>(memory.used));
      b.Gauge(metric_names::kGpuVramTotalBytes, "VRAM total", gpu,
              static_cast<double>(memory.total));
      b.Gauge("hw_gpu_vram_reserved_bytes", "VRAM reserved by the driver and firmware", gpu,
              static_cast<double>(memory.reserved));
      return;
    }
    if (rc != nvml::kNotSupported && rc != nvml::kFunctionNotFound &&
        rc != nvml::kArgumentVersionMismatch) {
      return;  // a real failure (GPU lost): v1 would not do better
    }
  }
  nvml::Memory memory{};
  if (lib.memory && lib.memory(device, &memory) == nvml::kSuccess) {
    Labels l = gpu;
    l["source"] = "v1";
    b.Gauge(metric_names::kGpuVramUsedBytes, "VRAM used", l, static_cast<double>(memory.used));
    b.Gauge(metric_names::kGpuVramTotalBytes, "VRAM total", l, static_cast<double>(memory.total));
  }
}

}  // namespace

Expected<Families> GpuNvmlCollector::Collect() {
  if (!nvml_) return Error{"NVML is not loaded"};
  const NvmlLibrary& lib = *nvml_;
  unsigned int count = 0;
  if (nvml::Return rc = lib.get_count(&count); rc != nvml::kSuccess) {
    return Error{"nvmlDeviceGetCount: " + lib.Describe(rc)};
  }
  FamilyBuilder b;
  ExportServedGpus(b, selection_, static_cast<int>(count), "nvidia");
  const std::set<unsigned> job_pids = JobPids(procfs_, job_id_);
  int outside_served = 0;
  for (unsigned int index = 0; index < count; ++index) {
    nvml::Device device = nullptr;
    if (nvml::Return rc = lib.get_handle(index, &device); rc != nvml::kSuccess) {
      // A GPU that fell off the bus: the others still report.
      continue;
    }
    const Labels gpu{{"gpu", std::to_string(index)}};
    const bool served = selection_.Serves(static_cast<int>(index));
    auto processes = ComputeProcesses(lib, device);
    if (!job_pids.empty() && processes) {
      int ours = 0;
      for (const GpuProcess& p : *processes) ours += job_pids.count(p.pid) ? 1 : 0;
      if (ours > 0 && !served) ++outside_served;
      if (ours > 0 || served) {
        Labels l = gpu;
        l["served"] = served ? "1" : "0";
        b.Gauge("hw_gpu_job_processes",
                "The job's processes with a compute context on the GPU (NVML accounting)", l, ours);
      }
    }
    if (!served) continue;
    auto ok = [](nvml::Return rc) { return rc == nvml::kSuccess; };
    nvml::Utilization utilization{};
    if (lib.utilization && ok(lib.utilization(device, &utilization))) {
      b.Gauge(metric_names::kGpuUtilizationPercent, "GPU busy percent", gpu, utilization.gpu);
      b.Gauge(metric_names::kGpuMemoryUtilizationPercent,
              "Percent of time device memory was accessed", gpu, utilization.memory);
    }
    unsigned int milliwatts = 0;
    if (lib.power && ok(lib.power(device, &milliwatts))) {
      b.Gauge(metric_names::kGpuPowerWatts, "Power draw", gpu, milliwatts / 1000.0);
    }
    unsigned int celsius = 0;
    if (lib.temperature && ok(lib.temperature(device, nvml::kTemperatureGpu, &celsius))) {
      b.Gauge(metric_names::kGpuTemperatureCelsius, "GPU die temperature", gpu, celsius);
    }
    for (auto [type, nvml_clock] : {std::pair{"sclk", nvml::kClockSm}, {"mclk", nvml::kClockMem}}) {
      unsigned int mhz = 0;
      if (lib.clock && ok(lib.clock(device, nvml_clock, &mhz))) {
        Labels l = gpu;
        l["type"] = type;
        b.Gauge(metric_names::kGpuClockMhz, "Clock (sclk=SM/core, mclk=memory)", l, mhz);
      }
      if (lib.max_clock && ok(lib.max_clock(device, nvml_clock, &mhz))) {
        Labels l = gpu;
        l["type"] = type;
        b.Gauge(metric_names::kGpuClockMaxMhz, "Maximum clock (sclk=SM/core, mclk=memory)", l, mhz);
      }
    }
    ExportMemory(lib, device, gpu, b);
    if (processes) {
      b.Gauge(metric_names::kGpuComputeProcesses, "Processes with a compute context on the GPU",
              gpu, static_cast<double>(processes->size()));
      for (const GpuProcess& p : *processes) {
        Labels l = gpu;
        l["pid"] = std::to_string(p.pid);
        b.Gauge("hw_gpu_process_vram_used_bytes", "VRAM used by one compute process", l,
                static_cast<double>(p.used_bytes));
      }
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
          b.Counter(metric_names::kGpuEccErrorsTotal,
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
      b.Gauge("hw_gpu_throttle_reasons", "nvmlClocksEventReasons bitmask", gpu,
              static_cast<double>(reasons));
      const bool capped =
          (reasons & (nvml::kReasonSwPowerCap | nvml::kReasonHwPowerBrakeSlowdown)) != 0;
      b.Gauge(metric_names::kGpuPowerCapped,
              "1 while the power cap or power brake holds the clocks back", gpu, capped ? 1 : 0);
      for (const auto& reason : nvml::kThrottleReasons) {
        Labels l = gpu;
        l["reason"] = reason.name;
        b.Gauge("hw_gpu_throttle_active", "1 while the clocks are held back for this reason", l,
                (reasons & reason.bit) ? 1 : 0);
      }
    }
  }
  if (!job_pids.empty()) {
    b.Gauge("hw_gpu_job_gpus_outside_served",
            "GPUs outside the served set where the job's processes run (NVML accounting)", {},
            outside_served);
  }
  return b.Take();
}

}  // namespace jobmon::exporter
