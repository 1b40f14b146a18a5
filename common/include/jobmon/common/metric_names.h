#pragma once
// The one home of every jobmon metric name a component reads: the monitor
// (from its scrapes) and diagnose (in its PromQL, its tables and its
// findings) read these names, and jobmon-exporter serves them from here:
// renaming one here renames it on every side. Names only the exporter
// serves, read by nothing, stay beside their collector; the tb_* series
// named after a job's own TensorBoard tags (TensorBoardMetricName) are the
// trainer's, not jobmon's, and stay beside their reader. The meaning and
// units of each are in the collector's help text and README's metric table.
//
// char arrays rather than string_views: the collectors' tables hold
// `const char*` and prometheus-cpp wants std::string.

namespace jobmon::metric_names {

// GPU (gpu_nvml and gpu_amd collectors); label gpu.
inline constexpr char kGpuUtilizationPercent[] = "hw_gpu_utilization_percent";  // busy %
inline constexpr char kGpuPowerWatts[] = "hw_gpu_power_watts";                  // power draw
inline constexpr char kGpuClockMhz[] = "hw_gpu_clock_mhz";  // label type: sclk (SM/core), mclk
inline constexpr char kGpuTemperatureCelsius[] = "hw_gpu_temperature_celsius";  // die/junction
inline constexpr char kGpuVramUsedBytes[] = "hw_gpu_vram_used_bytes";
inline constexpr char kGpuVramTotalBytes[] = "hw_gpu_vram_total_bytes";
// NVIDIA only (gpu_nvml): the busy-wait and dead-process signals.
inline constexpr char kGpuClockMaxMhz[] = "hw_gpu_clock_max_mhz";  // label type as above
inline constexpr char kGpuPowerCapped[] = "hw_gpu_power_capped";   // 1: cap or brake holds clocks
inline constexpr char kGpuMemoryUtilizationPercent[] =
    "hw_gpu_memory_utilization_percent";  // % of time device memory was accessed
inline constexpr char kGpuComputeProcesses[] = "hw_gpu_compute_processes";  // compute contexts
// NVIDIA only (gpu_nvml): ECC errors; labels error (corrected, uncorrected), counter.
inline constexpr char kGpuEccErrorsTotal[] = "hw_gpu_ecc_errors_total";
// AMD only (gpu_amd): RAS error counts per block, uncorrectable (ue) and correctable (ce).
inline constexpr char kGpuRasUmcUeTotal[] = "hw_gpu_ras_umc_ue_total";
inline constexpr char kGpuRasUmcCeTotal[] = "hw_gpu_ras_umc_ce_total";
inline constexpr char kGpuRasXgmiUeTotal[] = "hw_gpu_ras_xgmi_ue_total";
inline constexpr char kGpuRasXgmiCeTotal[] = "hw_gpu_ras_xgmi_ce_total";
inline constexpr char kGpuRasGfxUeTotal[] = "hw_gpu_ras_gfx_ue_total";
inline constexpr char kGpuRasGfxCeTotal[] = "hw_gpu_ras_gfx_ce_total";
inline constexpr char kGpuRasMmhubUeTotal[] = "hw_gpu_ras_mmhub_ue_total";
inline constexpr char kGpuRasMmhubCeTotal[] = "hw_gpu_ras_mmhub_ce_total";
inline constexpr char kGpuRasSdmaUeTotal[] = "hw_gpu_ras_sdma_ue_total";
inline constexpr char kGpuRasSdmaCeTotal[] = "hw_gpu_ras_sdma_ce_total";
// AMD only (gpu_amd): PCIe AER error totals.
inline constexpr char kGpuPcieCorrectableTotal[] = "hw_gpu_pcie_correctable_total";
inline constexpr char kGpuPcieNonfatalTotal[] = "hw_gpu_pcie_nonfatal_total";
inline constexpr char kGpuPcieFatalTotal[] = "hw_gpu_pcie_fatal_total";
// Which GPUs the exporter serves (gpu_selection): the job's own on a shared node.
inline constexpr char kGpuServed[] = "hw_gpu_served";           // 1 per served GPU; label source
inline constexpr char kGpuNodeGpus[] = "hw_gpu_node_gpus";      // GPUs on the node
inline constexpr char kGpuNodeShared[] = "hw_gpu_node_shared";  // 1: other jobs' GPUs beside

// Network (net, tcp and rdma collectors).
inline constexpr char kNetRxErrorsTotal[] = "hw_net_rx_errors_total";  // label device
inline constexpr char kNetTxErrorsTotal[] = "hw_net_tx_errors_total";
inline constexpr char kTcpRetransmitsTotal[] = "hw_tcp_retransmits_total";   // Tcp:RetransSegs
inline constexpr char kTcpListenDropsTotal[] = "hw_tcp_listen_drops_total";  // TcpExt:ListenDrops
inline constexpr char kTcpAbortOnTimeoutTotal[] =
    "hw_tcp_abort_on_timeout_total";  // TcpExt:TCPAbortOnTimeout
inline constexpr char kRdmaTxRetxPktsTotal[] = "hw_rdma_tx_retx_pkts_total";      // retransmits
inline constexpr char kRdmaTxAckTimeoutTotal[] = "hw_rdma_tx_ack_timeout_total";  // ack timeouts
inline constexpr char kRdmaRxCnpPktsTotal[] = "hw_rdma_rx_cnp_pkts_total";  // congestion notif.
inline constexpr char kRdmaReqRxCqeErrTotal[] = "hw_rdma_req_rx_cqe_err_total";
inline constexpr char kRdmaReqTxRetryExcdErrTotal[] =
    "hw_rdma_req_tx_retry_excd_err_total";                      // retries exhausted
inline constexpr char kRdmaPortState[] = "hw_rdma_port_state";  // 1 while the port is ACTIVE

// Host (host collector): CPU, memory, I/O pressure and blocked processes.
inline constexpr char kProcsRunning[] = "hw_procs_running";  // /proc/stat procs_running
inline constexpr char kProcsBlocked[] = "hw_procs_blocked";  // /proc/stat procs_blocked
inline constexpr char kContextSwitchesTotal[] = "hw_context_switches_total";
inline constexpr char kOomKillsTotal[] = "hw_oom_kills_total";           // /proc/vmstat oom_kill
inline constexpr char kMemDirtyBytes[] = "hw_mem_dirty_bytes";           // /proc/meminfo Dirty
inline constexpr char kMemWritebackBytes[] = "hw_mem_writeback_bytes";   // Writeback
inline constexpr char kMemAvailableBytes[] = "hw_mem_available_bytes";   // MemAvailable
inline constexpr char kIoPressureSomePct[] = "hw_io_pressure_some_pct";  // PSI some, avg10
inline constexpr char kIoPressureFullPct[] = "hw_io_pressure_full_pct";  // PSI full, avg10

// The job's own processes on the node (job_processes collector): what each
// waits on in the kernel, for telling a hung rank's wait from a slow one's.
// hw_job_processes: found by cgroup job_<id>, else by `scontrol listpids`.
// hw_job_process_info = 1 per process; labels pid, comm, state, wchan and
// task: the Slurm global task id (SLURM_PROCID, srun -l's label) of the
// process or of its nearest ancestor that is a task, "" when none is known.
inline constexpr char kJobProcesses[] = "hw_job_processes";
inline constexpr char kJobProcessInfo[] = "hw_job_process_info";
inline constexpr char kJobProcessThreads[] = "hw_job_process_threads";  // per pid, state
inline constexpr char kJobProcessWchanThreads[] =
    "hw_job_process_wchan_threads";  // per pid, wchan (the largest few, then "other")

// Kernel log (dmesg collector).
inline constexpr char kDmesgGpuErrorsTotal[] = "hw_dmesg_gpu_errors_total";  // GPU error lines
inline constexpr char kGpuXidErrorsTotal[] = "hw_gpu_xid_errors_total";      // label xid

// The exporter's own (collector pool): per collector (label collector) and per scrape.
inline constexpr char kCollectorSuccess[] = "hw_collector_success";  // 1: last collection in time
inline constexpr char kCollectorDurationSeconds[] = "hw_collector_duration_seconds";
inline constexpr char kScrapeDurationSeconds[] = "hw_scrape_duration_seconds";

// Training (training collector): the last step in the job's TensorBoard files.
inline constexpr char kTbStep[] = "tb_step";

// Ray's own node gauges (Ray 2.32 dashboard/modules/reporter/reporter_agent.py,
// scraped where the job starts Ray: docs/ray.md); labels ip, SessionName,
// Version, the GPU ones GpuIndex and GpuDeviceName; our host and jobmon_source.
inline constexpr char kRayGpuUtilization[] = "ray_node_gpus_utilization";  // busy %
inline constexpr char kRayGramUsed[] = "ray_node_gram_used";  // MiB, whatever its unit string says
inline constexpr char kRayGramAvailable[] = "ray_node_gram_available";  // MiB
inline constexpr char kRayMemAvailable[] = "ray_node_mem_available";    // bytes

}  // namespace jobmon::metric_names
