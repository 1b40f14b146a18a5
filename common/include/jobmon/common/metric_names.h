#pragma once
// The metric names that are a contract between jobmon-exporter (which
// serves them) and slurm_job_monitor (which reads them from its scrapes):
// renaming one here renames it on both sides. Names only the exporter serves
// stay beside their collector; the meaning and units of each are in the
// collector's help text and README's metric table.
//
// char arrays rather than string_views: the collectors' tables hold
// `const char*` and prometheus-cpp wants std::string.

namespace jobmon::metric_names {

// GPU (gpu_nvml and gpu_amd collectors); label gpu.
inline constexpr char kGpuUtilizationPercent[] = "hw_gpu_utilization_percent";  // busy %
inline constexpr char kGpuPowerWatts[] = "hw_gpu_power_watts";                  // power draw
inline constexpr char kGpuClockMhz[] = "hw_gpu_clock_mhz";  // label type: sclk (SM/core), mclk
// NVIDIA only (gpu_nvml): the busy-wait and dead-process signals.
inline constexpr char kGpuClockMaxMhz[] = "hw_gpu_clock_max_mhz";  // label type as above
inline constexpr char kGpuPowerCapped[] = "hw_gpu_power_capped";   // 1: cap or brake holds clocks
inline constexpr char kGpuMemoryUtilizationPercent[] =
    "hw_gpu_memory_utilization_percent";  // % of time device memory was accessed
inline constexpr char kGpuComputeProcesses[] = "hw_gpu_compute_processes";  // compute contexts
// Which GPUs the exporter serves (gpu_selection): the job's own on a shared node.
inline constexpr char kGpuServed[] = "hw_gpu_served";           // 1 per served GPU; label source
inline constexpr char kGpuNodeGpus[] = "hw_gpu_node_gpus";      // GPUs on the node
inline constexpr char kGpuNodeShared[] = "hw_gpu_node_shared";  // 1: other jobs' GPUs beside

// Network (net and rdma collectors).
inline constexpr char kTcpRetransmitsTotal[] = "hw_tcp_retransmits_total";        // Tcp:RetransSegs
inline constexpr char kRdmaTxRetxPktsTotal[] = "hw_rdma_tx_retx_pkts_total";      // retransmits
inline constexpr char kRdmaTxAckTimeoutTotal[] = "hw_rdma_tx_ack_timeout_total";  // ack timeouts
inline constexpr char kRdmaPortState[] = "hw_rdma_port_state";  // 1 while the port is ACTIVE

// Host (host collector): I/O pressure and blocked processes.
inline constexpr char kIoPressureSomePct[] = "hw_io_pressure_some_pct";  // PSI some, avg10
inline constexpr char kIoPressureFullPct[] = "hw_io_pressure_full_pct";  // PSI full, avg10
inline constexpr char kProcsBlocked[] = "hw_procs_blocked";              // /proc/stat procs_blocked

// Kernel log (dmesg collector).
inline constexpr char kDmesgGpuErrorsTotal[] = "hw_dmesg_gpu_errors_total";  // GPU error lines

// Training (training collector): the last step in the job's TensorBoard files.
inline constexpr char kTbStep[] = "tb_step";

}  // namespace jobmon::metric_names
