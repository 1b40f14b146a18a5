#pragma once
// The part of NVML's C ABI that gpu_nvml calls, declared from NVIDIA's
// documented API (nvml.h is not packaged in Debian main). Every symbol is
// looked up with dlsym, so nothing links against libnvidia-ml.

namespace jobmon::exporter::nvml {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
using Device = struct DeviceOpaque*;  // nvmlDevice_t

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
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
using GetClockInfoFn = Return (*)(Device, int, unsigned int*);  // MHz
using GetMemoryInfoFn = Return (*)(Device, Memory*);
using GetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using GetPcieReplayCounterFn = Return (*)(Device, unsigned int*);
using GetThrottleReasonsFn = Return (*)(Device, unsigned long long*);

// nvmlClocksThrottleReason* bits, named as node exporters commonly do.
struct ThrottleReason {
  unsigned long long bit;
  const char* name;
};
inline constexpr ThrottleReason kThrottleReasons[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

}  // namespace jobmon::exporter::nvml
