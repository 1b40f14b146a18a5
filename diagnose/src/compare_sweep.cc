#include "compare_sweep.h"

#include <fmt/format.h>

#include "jobmon/diagnose/query_helpers.h"

namespace jobmon::diagnose::compare_detail {

// Thresholds: tsdb-diagnosis.md. Step time and throughput: Playbook 7
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
      {"hw_procs_running", "", false, "CPU", "", Role::kCause, "procs-running", 1.0, 0, false,
       "more runnable processes: CPU contention"},
      {"hw_procs_blocked", "", false, "CPU", "", Role::kCause, "procs-blocked", 1.0, 0, false,
       "more processes blocked on I/O"},
      {"hw_context_switches_total", "", true, "CPU", "/s", Role::kInfo, "", 0, 0.20, false,
       "more context switching"},
      // Network (RDMA): the most impactful differentiator across node sets.
      {"hw_rdma_req_tx_retry_excd_err_total", "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-retry-exhaustion", 1e-6, 0, false, "RDMA retry exhaustion: packets lost"},
      {"hw_rdma_tx_retx_pkts_total", "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-retransmits", 1e-3, 0, false, "RDMA retransmits slow every collective"},
      {"hw_rdma_tx_ack_timeout_total", "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-ack-timeouts", 1e-6, 0, false, "RDMA ACK timeouts: link or switch issue"},
      {"hw_rdma_rx_cnp_pkts_total", "", true, "Network (RDMA)", "/s", Role::kCause,
       "rdma-congestion", 1e-3, 0.20, false, "congestion notifications: switch congestion"},
      // Network (TCP).
      {"hw_tcp_retransmits_total", "", true, "Network (TCP)", "/s", Role::kTcp, "tcp-retransmits",
       10, 0, false, "TCP retransmits"},
      {"hw_tcp_abort_on_timeout_total", "", true, "Network (TCP)", "/s", Role::kTcp, "tcp-aborts",
       1e-6, 0, false, "TCP connections aborted"},
      // Storage I/O.
      {"hw_io_pressure_full_pct", "", false, "Storage I/O", "%", Role::kCause, "io-pressure", 5, 0,
       false, "I/O pressure stalls data loading"},
      {"hw_io_pressure_some_pct", "", false, "Storage I/O", "%", Role::kCause, "io-pressure", 5, 0,
       false, "I/O pressure stalls data loading"},
      {"hw_mem_dirty_bytes", "", false, "Storage I/O", "B", Role::kCause, "io-pressure",
       64.0 * 1024 * 1024, 0.5, false, "dirty page backlog: storage slow to absorb writes"},
      // Memory: host memory does not slow GPU training by itself (reference,
      // Common Pitfalls); OOM kills do.
      {"hw_oom_kills_total", "", true, "Memory", "/s", Role::kCause, "oom-kill", 1e-6, 0, false,
       "OOM kills"},
      {"hw_mem_available_bytes", "", false, "Memory", "B", Role::kInfo, "", 0, 0.20, true,
       "host memory use differs"},
      // GPU hardware.
      {"hw_gpu_xid_errors_total", "", true, "GPU hardware", "/s", Role::kCause, "xid-errors", 1e-6,
       0, false, "Xid errors"},
      {"hw_gpu_ecc_errors_total", R"(error="uncorrected",counter="volatile")", true, "GPU hardware",
       "/s", Role::kCause, "ecc-uncorrectable", 1e-6, 0, false, "uncorrectable ECC errors"},
      {"hw_gpu_ecc_errors_total", R"(error="corrected",counter="volatile")", true, "GPU hardware",
       "/s", Role::kCause, "ecc-correctable", 1e-6, 0, false, "correctable ECC errors"},
      {"hw_gpu_ras_umc_ue_total", "", true, "GPU hardware", "/s", Role::kCause, "ecc-uncorrectable",
       1e-6, 0, false, "uncorrectable HBM ECC errors"},
      {"hw_gpu_ras_umc_ce_total", "", true, "GPU hardware", "/s", Role::kCause, "ecc-correctable",
       1e-6, 0, false, "correctable HBM ECC errors"},
      {"hw_gpu_pcie_fatal_total", "", true, "GPU hardware", "/s", Role::kCause, "pcie-fatal", 1e-6,
       0, false, "PCIe fatal errors"},
      {"hw_gpu_pcie_nonfatal_total", "", true, "GPU hardware", "/s", Role::kCause, "pcie-nonfatal",
       1e-6, 0, false, "PCIe non-fatal errors"},
      {"hw_gpu_pcie_correctable_total", "", true, "GPU hardware", "/s", Role::kCause,
       "pcie-correctable", 1e-6, 0, false, "PCIe correctable errors"},
      {"hw_dmesg_gpu_errors_total", "", true, "GPU hardware", "/s", Role::kCause,
       "dmesg-gpu-errors", 1e-6, 0, false, "GPU/driver errors in dmesg"},
      // GPU thermal: temperature is the cause, clock/power/utilisation follow.
      {"hw_gpu_temperature_celsius", "", false, "GPU thermal", "°C", Role::kCause, "thermal-high",
       5, 0, true, "hotter GPUs: thermal throttling"},
      {"hw_gpu_clock_mhz", R"(type="sclk")", false, "GPU thermal", "MHz", Role::kSymptom,
       "clock-drop", 0, 0.05, true, "core clock differs"},
      {"hw_gpu_power_watts", "", false, "GPU thermal", "W", Role::kSymptom, "power-spread", 0, 0.10,
       true, "GPU power differs"},
      {"hw_gpu_utilization_percent", "", false, "GPU thermal", "%", Role::kSymptom, "util-low", 10,
       0, true, "GPU utilisation differs"},
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
