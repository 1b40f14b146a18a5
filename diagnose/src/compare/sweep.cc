#include "compare/sweep.h"

#include <fmt/format.h>

#include "jobmon/common/metric_names.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose::compare_detail {

// Thresholds: docs/diagnose.md. Step time and throughput: Playbook 7
// ">10% drop from steady-state average"; TCP: Playbook 6 ">10/s sustained";
// RDMA, retry exhaustion, OOM kills, GPU error counters: "any sustained > 0"
// (a tiny floor, the noise test does the rest). GPU power, clock and
// utilisation are compared relative to the jobs' own levels, not in the
// reference's MI355X watts, so AMD, NVIDIA and the fake trainer's GPUs all
// work (the monitor does the same: monitor/src/verdicts/stall_classifier.cc).
const std::vector<SweepMetric>& Sweep() {
  static const std::vector<SweepMetric> kSweep = {
      // Training-level: the TGS metric and step time (symptoms of the rest).
      {"tb_perf_step_time_seconds", "", false, "Training-level", "s", Role::kSymptom,
       "step-time-increase", 0, 0.10, true, "slower steps"},
      {"tb_perf_per_device_tokens_per_sec", "", false, "Training-level", "tokens/s", Role::kSymptom,
       "throughput-drop", 0, 0.10, true, "throughput (TGS) differs"},
      // CPU.
      {metric_names::kProcsRunning, "", false, "CPU", "", Role::kCause, "procs-running", 1.0, 0,
       false, "more runnable processes: CPU contention"},
      {metric_names::kProcsBlocked, "", false, "CPU", "", Role::kCause, "procs-blocked", 1.0, 0,
       false, "more processes blocked on I/O"},
      {metric_names::kContextSwitchesTotal, "", true, "CPU", "/s", Role::kInfo, "", 0, 0.20, false,
       "more context switching"},
      // Network (RDMA): the most impactful differentiator across node sets.
      {metric_names::kRdmaReqTxRetryExcdErrTotal, "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-retry-exhaustion", 1e-6, 0, false, "RDMA retry exhaustion: packets lost"},
      {metric_names::kRdmaTxRetxPktsTotal, "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-retransmits", 1e-3, 0, false, "RDMA retransmits slow every collective"},
      {metric_names::kRdmaTxAckTimeoutTotal, "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-ack-timeouts", 1e-6, 0, false, "RDMA ACK timeouts: link or switch issue"},
      {metric_names::kRdmaRxCnpPktsTotal, "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-congestion", 1e-3, 0.20, false, "congestion notifications: switch congestion"},
      // Network (TCP).
      {metric_names::kTcpRetransmitsTotal, "", true, "Network (TCP)", "/s", Role::kTcp,
       "tcp-retransmits", 10, 0, false, "TCP retransmits"},
      {metric_names::kTcpAbortOnTimeoutTotal, "", true, "Network (TCP)", "/s", Role::kTcp,
       "tcp-aborts", 1e-6, 0, false, "TCP connections aborted"},
      // Storage I/O.
      {metric_names::kIoPressureFullPct, "", false, "Storage I/O", "%", Role::kCause, "io-pressure",
       5, 0, false, "I/O pressure stalls data loading"},
      {metric_names::kIoPressureSomePct, "", false, "Storage I/O", "%", Role::kCause, "io-pressure",
       5, 0, false, "I/O pressure stalls data loading"},
      {metric_names::kMemDirtyBytes, "", false, "Storage I/O", "B", Role::kCause, "io-pressure",
       64.0 * 1024 * 1024, 0.5, false, "dirty page backlog: storage slow to absorb writes"},
      // Memory: host memory does not slow GPU training by itself (reference,
      // Common Pitfalls); OOM kills do.
      {metric_names::kOomKillsTotal, "", true, "Memory", "/s", Role::kCause, "oom-kill", 1e-6, 0,
       false, "OOM kills"},
      {metric_names::kMemAvailableBytes, "", false, "Memory", "B", Role::kInfo, "", 0, 0.20, true,
       "host memory use differs"},
      // GPU hardware.
      {metric_names::kGpuXidErrorsTotal, "", true, "GPU hardware", "/s", Role::kCause, "xid-errors",
       1e-6, 0, false, "Xid errors"},
      {metric_names::kGpuEccErrorsTotal, R"(error="uncorrected",counter="volatile")", true,
       "GPU hardware", "/s", Role::kCause, "ecc-uncorrectable", 1e-6, 0, false,
       "uncorrectable ECC errors"},
      {metric_names::kGpuEccErrorsTotal, R"(error="corrected",counter="volatile")", true,
       "GPU hardware", "/s", Role::kCause, "ecc-correctable", 1e-6, 0, false,
       "correctable ECC errors"},
      {metric_names::kGpuRasUmcUeTotal, "", true, "GPU hardware", "/s", Role::kCause,
       "ecc-uncorrectable", 1e-6, 0, false, "uncorrectable HBM ECC errors"},
      {metric_names::kGpuRasUmcCeTotal, "", true, "GPU hardware", "/s", Role::kCause,
       "ecc-correctable", 1e-6, 0, false, "correctable HBM ECC errors"},
      {metric_names::kGpuPcieFatalTotal, "", true, "GPU hardware", "/s", Role::kCause, "pcie-fatal",
       1e-6, 0, false, "PCIe fatal errors"},
      {metric_names::kGpuPcieNonfatalTotal, "", true, "GPU hardware", "/s", Role::kCause,
       "pcie-nonfatal", 1e-6, 0, false, "PCIe non-fatal errors"},
      {metric_names::kGpuPcieCorrectableTotal, "", true, "GPU hardware", "/s", Role::kCause,
       "pcie-correctable", 1e-6, 0, false, "PCIe correctable errors"},
      {metric_names::kDmesgGpuErrorsTotal, "", true, "GPU hardware", "/s", Role::kCause,
       "dmesg-gpu-errors", 1e-6, 0, false, "GPU/driver errors in dmesg"},
      // GPU thermal: temperature is the cause, clock/power/utilisation follow.
      {metric_names::kGpuTemperatureCelsius, "", false, "GPU thermal", "°C", Role::kCause,
       "thermal-high", 5, 0, true, "hotter GPUs: thermal throttling"},
      {metric_names::kGpuClockMhz, R"(type="sclk")", false, "GPU thermal", "MHz", Role::kSymptom,
       "clock-drop", 0, 0.05, true, "core clock differs"},
      {metric_names::kGpuPowerWatts, "", false, "GPU thermal", "W", Role::kSymptom, "power-spread",
       0, 0.10, true, "GPU power differs"},
      {metric_names::kGpuUtilizationPercent, "", false, "GPU thermal", "%", Role::kSymptom,
       "util-low", 10, 0, true, "GPU utilisation differs"},
      // Training-level behaviour (a different run, not contention).
      {"tb_learning_grad_norm", "", false, "Training-level", "", Role::kInfo, "", 0, 0.5, true,
       "gradient norm differs"},
      {"tb_learning_loss", "", false, "Training-level", "", Role::kInfo, "", 0, 0.5, true,
       "loss differs"},
  };
  return kSweep;
}

std::string SweepQuery(const SweepMetric& metric, const DiagnoseContext& context) {
  if (metric.counter) {
    return fmt::format("sum by (host) ({})", RateExpr(metric.family, context, metric.selector));
  }
  if (metric.selector.empty()) return std::string(metric.family);
  return fmt::format("{}{{{}}}", metric.family, metric.selector);
}

}  // namespace jobmon::diagnose::compare_detail
