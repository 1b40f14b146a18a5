#pragma once
// What a stall is, from system evidence at the moment it was detected
// (docs/diagnose.md, "Hang playbook"): GPU power is
// the ground truth, judged against this job's own training baseline, not a
// vendor constant.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace jobmon::monitor {

// One of the job's processes on a host as the exporter's job_processes
// collector last saw it (docs/exporter.md): its state letter and kernel
// wait channel, its threads by state and by wait channel, and the Slurm
// task it is or descends from (srun -l's label; "" when not known).
struct ProcessWait {
  std::string pid, comm, state, wchan, task;
  std::map<std::string, int> threads;        // by state letter
  std::map<std::string, int> thread_wchans;  // by wait channel
};
// "task 1: python3 pid 4242 D in nfs_wait_bit_killable (12 threads: 10 S,
// 2 D; futex_wait_queue 9, ...)", bounded; without a task, no "task N: ".
std::string DescribeProcess(const ProcessWait& process);

// D state counts for hang/io-wait once it lasted this long across scrapes.
inline constexpr double kSustainedDStateSeconds = 5;

struct HostEvidence {
  std::string host;
  bool exporter_up = true;                    // its last scrape succeeded
  double seconds_since_seen = 0;              // since its last successful scrape
  std::vector<double> gpu_utilization;        // percent, per GPU, now
  std::vector<double> gpu_power;              // watts, per GPU, now
  std::optional<double> baseline_power;       // median per-GPU watts while training
  std::optional<double> tcp_retransmit_rate;  // per second, just before the stall
  std::optional<double> tcp_retransmit_baseline;
  std::optional<double> io_pressure_some;  // percent, now
  std::optional<double> procs_blocked;     // now

  // NVIDIA (NVML) signals; absent on AMD, whose measured rules stay as they are.
  // An H100 never drops to 0 W while a process holds a context: 71 W idle,
  // ~120 W with a context open, 124-146 W spinning in a collective. Power is
  // then judged by how far it is above this floor, not from 0 W.
  std::optional<double> idle_power_floor;  // watts per GPU, context open, no work
  std::vector<double> sm_clock_mhz;        // per GPU, now
  std::optional<double> sm_clock_max_mhz;  // the GPUs' maximum SM clock
  std::optional<bool> power_capped;        // any GPU held back by its power cap now
  std::vector<double> memory_utilization;  // percent of time memory was accessed, per GPU
  std::optional<double> power_spread;      // (max - min) / mean of power since the stall began
  std::optional<int> job_gpu_processes;    // the job's processes on its GPUs (NVML)
  // The job's processes on the host and what each waits on in the kernel,
  // from the latest scrape within stale_after (empty: none reported).
  std::vector<ProcessWait> job_processes;
  // How long one of them has been in D state without a break, across
  // scrapes (0: only in the latest, or none; nullopt: not measured). A
  // thread that blocks for a moment on a busy disk is not a rank stuck in
  // the kernel.
  std::optional<double> d_state_seconds;

  // A node shared with other jobs (hw_gpu_node_shared): the GPU figures
  // above are the job's own GPUs only (hw_gpu_served), while TCP, I/O
  // pressure and D-state counts are the whole node's.
  bool node_shared = false;
  std::optional<int> served_gpus;  // GPUs the exporter serves (hw_gpu_served)
  std::optional<int> node_gpus;    // GPUs on the node (hw_gpu_node_gpus)
};

// "" on a node of the job's own; else the evidence's note that GPU figures
// are the job's GPUs and host-level series are node-wide.
std::string SharedNodeNote(const HostEvidence& host);

struct StallEvidence {
  std::vector<HostEvidence> hosts;
  double stale_after_seconds = 30;  // a host not seen for this long is gone
};

struct StallClassification {
  std::string klass;    // hang/busy-wait, hang/node-death, hang/straggler, slow-not-hung, hang
  std::string summary;  // one sentence with the deciding numbers
  std::vector<std::string> evidence;  // one line per host
  std::vector<std::string> hosts;     // the hosts the class names (dead, straggling)
};

// Power relative to baseline (above the idle floor where one is known):
// >= 70% "active", < 50% "idle-level". Between the two, or without a
// baseline, an NVIDIA GPU is a busy-wait when it spins (util >= 90%) at its
// maximum SM clock without a power cap, with memory almost untouched and
// power flat: small-model training can draw as little as a spin relative to
// a large job, but it moves data through memory. A live host whose GPUs no
// longer carry any process of the job counts as dead (its power stays at
// the context floor, never 0 W).
StallClassification ClassifyStall(const StallEvidence& evidence);

}  // namespace jobmon::monitor
