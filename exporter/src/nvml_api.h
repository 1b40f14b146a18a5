#pragma once
// The part of NVML's C ABI that gpu_nvml calls. nvml.h is not packaged in
// Debian main; every layout and constant here is copied from NVIDIA's
// nvml.h as carried by github.com/NVIDIA/go-nvml (gen/nvml/nvml.h at
// 2f9e261f, NVML API version 13; the nvmlProcessInfo layouts are the same
// in its 12.1 copy). Every symbol is looked up with dlsym, so nothing links
// against libnvidia-ml.

namespace jobmon::exporter::nvml {

using Return = int;                              // nvmlReturn_t
constexpr Return kSuccess = 0;                   // NVML_SUCCESS
constexpr Return kNotSupported = 3;              // NVML_ERROR_NOT_SUPPORTED
constexpr Return kInsufficientSize = 7;          // NVML_ERROR_INSUFFICIENT_SIZE
constexpr Return kFunctionNotFound = 13;         // NVML_ERROR_FUNCTION_NOT_FOUND
constexpr Return kArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
using Device = struct DeviceOpaque*;             // nvmlDevice_t

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {  // nvmlMemory_t (v1): used counts the driver's reserved memory
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct MemoryV2 {  // nvmlMemory_v2_t: reserved accounted separately
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// nvmlMemory_v2 = NVML_STRUCT_VERSION(Memory, 2) = sizeof | (2 << 24).
constexpr unsigned int kMemoryV2Version = static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24);

struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t (nvmlDeviceGetComputeRunningProcesses)
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t = nvmlProcessInfo_t (_v2 and _v3 calls)
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr int kClockMem = 2;        // NVML_CLOCK_MEM
constexpr int kCorrected = 0;       // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kUncorrected = 1;     // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0;     // NVML_VOLATILE_ECC
constexpr int kAggregateEcc = 1;    // NVML_AGGREGATE_ECC

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using GetCountFn = Return (*)(unsigned int*);
using GetHandleByIndexFn = Return (*)(unsigned int, Device*);
using GetUtilizationRatesFn = Return (*)(Device, Utilization*);
using GetPowerUsageFn = Return (*)(Device, unsigned int*);  // milliwatts
using GetTemperatureFn = Return (*)(Device, int, unsigned int*);
using GetClockInfoFn = Return (*)(Device, int, unsigned int*);  // MHz; also GetMaxClockInfo
using GetMemoryInfoFn = Return (*)(Device, Memory*);
using GetMemoryInfoV2Fn = Return (*)(Device, MemoryV2*);
using GetProcessesV1Fn = Return (*)(Device, unsigned int*, ProcessInfoV1*);
using GetProcessesV2Fn = Return (*)(Device, unsigned int*, ProcessInfoV2*);
using GetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using GetPcieReplayCounterFn = Return (*)(Device, unsigned int*);
using GetThrottleReasonsFn = Return (*)(Device, unsigned long long*);

// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*) bits.
constexpr unsigned long long kReasonSwPowerCap = 0x4;
constexpr unsigned long long kReasonHwPowerBrakeSlowdown = 0x80;
struct ThrottleReason {
  unsigned long long bit;
  const char* name;
};
inline constexpr ThrottleReason kThrottleReasons[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {kReasonSwPowerCap, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {kReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

}  // namespace jobmon::exporter::nvml
