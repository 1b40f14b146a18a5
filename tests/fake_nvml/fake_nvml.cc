// A stand-in for libnvidia-ml.so.1 so gpu_nvml is tested through the same
// dlopen path as on a GPU node. It follows NVML's documented contract for the
// calls the collector makes: nothing works before nvmlInit_v2, a bad handle
// or null output pointer is NVML_ERROR_INVALID_ARGUMENT, and a value a GPU
// lacks is NVML_ERROR_NOT_SUPPORTED.
//
// The GPUs come from the file named by $JOBMON_FAKE_NVML_STATE, re-read by
// nvmlDeviceGetCount_v2 so tests can change values between scrapes:
//   gpu util=93 mem_util=41 power_mw=352000 temp=71 sm_mhz=1980 ...
//   gpu lost=1                      (nvmlDeviceGetHandleByIndex: GPU_IS_LOST)
//   gpu unsupported=power,ecc       (those calls: NOT_SUPPORTED)
//   gpu pids=4242:1073741824,4243:0 (compute processes, pid:used bytes;
//                                    pids=none: no process; absent: NOT_SUPPORTED)
//   gpu mem_reserved=503316480      (v1 counts it in used, v2 apart)
// Built twice: as a current driver (every symbol), and with
// FAKE_NVML_OLD_DRIVER as one that predates nvmlDeviceGetMemoryInfo_v2,
// nvmlDeviceGetComputeRunningProcesses_v2/_v3 and the ClocksEvent rename,
// so the collector's fallbacks meet a symbol that is really missing.
// Layouts and codes follow nvml.h (NVIDIA/go-nvml gen/nvml/nvml.h).
// No file: nvmlInit_v2 fails with DRIVER_NOT_LOADED, as on a node without
// the NVIDIA driver.

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

enum : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kInsufficientSize = 7,
  kDriverNotLoaded = 9,
  kGpuIsLost = 15,
  kArgumentVersionMismatch = 25,
};

struct Process {
  unsigned int pid;
  unsigned long long used;
};

struct FakeGpu {
  std::map<std::string, unsigned long long> values;
  std::set<std::string> unsupported;
  std::optional<std::vector<Process>> processes;
  bool lost = false;
};

std::mutex mutex;
int init_count = 0;
std::vector<FakeGpu> gpus;  // never shrinks: handles stay valid

// `fresh`: nvmlInit_v2 starts over; later reloads keep the handles already
// given out valid (a GPU that disappears reads as lost, as on a real node).
bool LoadState(bool fresh) {
  const char* path = std::getenv("JOBMON_FAKE_NVML_STATE");
  if (!path) return false;
  std::ifstream in(path);
  if (!in) return false;
  std::vector<FakeGpu> loaded;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word != "gpu") continue;
    FakeGpu gpu;
    while (words >> word) {
      auto eq = word.find('=');
      if (eq == std::string::npos) continue;
      std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "unsupported") {
        std::istringstream list(value);
        for (std::string field; std::getline(list, field, ',');) gpu.unsupported.insert(field);
      } else if (key == "pids") {
        gpu.processes.emplace();
        std::istringstream list(value);
        for (std::string item; std::getline(list, item, ',');) {
          if (item == "none") continue;
          auto colon = item.find(':');
          gpu.processes->push_back(
              {static_cast<unsigned int>(std::strtoul(item.c_str(), nullptr, 10)),
               colon == std::string::npos ? 0
                                          : std::strtoull(item.c_str() + colon + 1, nullptr, 0)});
        }
      } else if (key == "lost") {
        gpu.lost = value == "1";
      } else {
        gpu.values[key] = std::strtoull(value.c_str(), nullptr, 0);
      }
    }
    loaded.push_back(std::move(gpu));
  }
  if (!fresh && loaded.size() < gpus.size()) {
    for (size_t i = loaded.size(); i < gpus.size(); ++i) loaded.push_back({{}, {}, {}, true});
  }
  gpus = std::move(loaded);
  return true;
}

// Handles are 1-based indices disguised as pointers.
FakeGpu* Lookup(void* handle) {
  auto index = reinterpret_cast<uintptr_t>(handle);
  if (index == 0 || index > gpus.size()) return nullptr;
  return &gpus[index - 1];
}

template <typename T>
int Field(void* handle, const char* field, const char* key, T* out) {
  std::lock_guard lock(mutex);
  if (init_count == 0) return kUninitialized;
  FakeGpu* gpu = Lookup(handle);
  if (!gpu || !out) return kInvalidArgument;
  if (gpu->lost) return kGpuIsLost;
  if (gpu->unsupported.count(field)) return kNotSupported;
  auto it = gpu->values.find(key);
  if (it == gpu->values.end()) return kNotSupported;
  *out = static_cast<T>(it->second);
  return kSuccess;
}

struct Utilization {
  unsigned int gpu, memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

// Used and reserved bytes as the v2 call reports them.
int MemoryFields(void* device, unsigned long long* total, unsigned long long* used,
                 unsigned long long* reserved) {
  if (int rc = Field(device, "memory", "mem_total", total); rc != kSuccess) return rc;
  if (int rc = Field(device, "memory", "mem_used", used); rc != kSuccess) return rc;
  if (Field(device, "memory", "mem_reserved", reserved) != kSuccess) *reserved = 0;
  return kSuccess;
}

// nvmlDeviceGetComputeRunningProcesses*: *count too small (0 included, with
// infos NULL) is INSUFFICIENT_SIZE with the count needed; none is SUCCESS.
template <typename Info>
int Processes(void* device, unsigned int* count, Info* infos) {
  std::lock_guard lock(mutex);
  if (init_count == 0) return kUninitialized;
  FakeGpu* gpu = Lookup(device);
  if (!gpu || !count) return kInvalidArgument;
  if (gpu->lost) return kGpuIsLost;
  if (gpu->unsupported.count("processes") || !gpu->processes) return kNotSupported;
  const auto& list = *gpu->processes;
  if (*count < list.size()) {
    *count = static_cast<unsigned int>(list.size());
    return list.empty() ? kSuccess : kInsufficientSize;
  }
  if (!list.empty() && !infos) return kInvalidArgument;
  for (size_t i = 0; i < list.size(); ++i) {
    infos[i] = Info{};
    infos[i].pid = list[i].pid;
    infos[i].usedGpuMemory = list[i].used;
    if constexpr (sizeof(Info) == sizeof(ProcessInfoV2)) {
      infos[i].gpuInstanceId = infos[i].computeInstanceId = 0xFFFFFFFF;  // not MIG
    }
  }
  *count = static_cast<unsigned int>(list.size());
  return kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int nvmlInit_v2() {
  std::lock_guard lock(mutex);
  if (!LoadState(/*fresh=*/true)) return kDriverNotLoaded;
  ++init_count;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlShutdown() {
  std::lock_guard lock(mutex);
  if (init_count == 0) return kUninitialized;
  --init_count;
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(int result) {
  switch (result) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    case kGpuIsLost:
      return "GPU is lost";
    case kInsufficientSize:
      return "Insufficient Size";
    case kArgumentVersionMismatch:
      return "Argument Version Mismatch";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard lock(mutex);
  if (init_count == 0) return kUninitialized;
  if (!count) return kInvalidArgument;
  LoadState(/*fresh=*/false);
  *count = static_cast<unsigned int>(gpus.size());
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                         void** device) {
  std::lock_guard lock(mutex);
  if (init_count == 0) return kUninitialized;
  if (!device || index >= gpus.size()) return kInvalidArgument;
  if (gpus[index].lost) return kGpuIsLost;
  *device = reinterpret_cast<void*>(uintptr_t{index} + 1);
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* device,
                                                                         Utilization* out) {
  if (!out) return kInvalidArgument;
  Utilization u{};
  if (int rc = Field(device, "utilization", "util", &u.gpu); rc != kSuccess) return rc;
  if (int rc = Field(device, "utilization", "mem_util", &u.memory); rc != kSuccess) return rc;
  *out = u;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* device,
                                                                   unsigned int* milliwatts) {
  return Field(device, "power", "power_mw", milliwatts);
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* device, int sensor,
                                                                    unsigned int* celsius) {
  if (sensor != 0) return kInvalidArgument;  // only NVML_TEMPERATURE_GPU exists
  return Field(device, "temperature", "temp", celsius);
}

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void* device, int type,
                                                                  unsigned int* mhz) {
  switch (type) {
    case 0:
      return Field(device, "clock", "graphics_mhz", mhz);
    case 1:
      return Field(device, "clock", "sm_mhz", mhz);
    case 2:
      return Field(device, "clock", "mem_mhz", mhz);
    case 3:
      return Field(device, "clock", "video_mhz", mhz);
    default:
      return kInvalidArgument;
  }
}

__attribute__((visibility("default"))) int nvmlDeviceGetMaxClockInfo(void* device, int type,
                                                                     unsigned int* mhz) {
  switch (type) {
    case 0:
      return Field(device, "max_clock", "graphics_max_mhz", mhz);
    case 1:
      return Field(device, "max_clock", "sm_max_mhz", mhz);
    case 2:
      return Field(device, "max_clock", "mem_max_mhz", mhz);
    case 3:
      return Field(device, "max_clock", "video_max_mhz", mhz);
    default:
      return kInvalidArgument;
  }
}

// v1 counts the reserved memory as used.
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, Memory* out) {
  if (!out) return kInvalidArgument;
  unsigned long long total = 0, used = 0, reserved = 0;
  if (int rc = MemoryFields(device, &total, &used, &reserved); rc != kSuccess) return rc;
  *out = Memory{total, total - used - reserved, used + reserved};
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses(
    void* device, unsigned int* count, ProcessInfoV1* infos) {
  return Processes(device, count, infos);
}

#ifndef FAKE_NVML_OLD_DRIVER
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo_v2(void* device, MemoryV2* out) {
  if (!out) return kInvalidArgument;
  // nvmlMemory_v2 = NVML_STRUCT_VERSION(Memory, 2)
  if (out->version != (static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24))) {
    return kArgumentVersionMismatch;
  }
  unsigned long long total = 0, used = 0, reserved = 0;
  if (int rc = MemoryFields(device, &total, &used, &reserved); rc != kSuccess) return rc;
  out->total = total;
  out->reserved = reserved;
  out->used = used;
  out->free = total - used - reserved;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v2(
    void* device, unsigned int* count, ProcessInfoV2* infos) {
  return Processes(device, count, infos);
}

__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v3(
    void* device, unsigned int* count, ProcessInfoV2* infos) {
  return Processes(device, count, infos);
}

__attribute__((visibility("default"))) int nvmlDeviceGetCurrentClocksEventReasons(
    void* device, unsigned long long* reasons) {
  return Field(device, "throttle", "throttle", reasons);
}
#endif

__attribute__((visibility("default"))) int nvmlDeviceGetTotalEccErrors(void* device, int error_type,
                                                                       int counter_type,
                                                                       unsigned long long* count) {
  if (error_type < 0 || error_type > 1 || counter_type < 0 || counter_type > 1) {
    return kInvalidArgument;
  }
  std::string key = std::string("ecc_") + (error_type == 0 ? "corrected" : "uncorrected") +
                    (counter_type == 0 ? "_volatile" : "_aggregate");
  return Field(device, "ecc", key.c_str(), count);
}

__attribute__((visibility("default"))) int nvmlDeviceGetPcieReplayCounter(void* device,
                                                                          unsigned int* value) {
  return Field(device, "pcie_replay", "pcie_replay", value);
}

__attribute__((visibility("default"))) int nvmlDeviceGetCurrentClocksThrottleReasons(
    void* device, unsigned long long* reasons) {
  return Field(device, "throttle", "throttle", reasons);
}

}  // extern "C"
