#pragma once
// job_processes: what each of the Slurm job's processes on this node waits
// on in the kernel, from procfs only (docs/exporter.md says what is read).

#include <cstddef>
#include <string>

#include "jobmon/exporter/collector.h"

namespace jobmon::exporter {

// Bounds on the series: at most `processes` processes (the ones with the
// most threads), `threads` threads read per process, and `wchans` wait
// channels per process (the rest summed as "other").
struct JobProcessLimits {
  size_t processes = 64;
  size_t threads = 512;
  size_t wchans = 4;
};

// The job's processes are those whose cgroup names job_<job_id> (JobPids,
// gpu_selection.h). Series: hw_job_processes (found),
// hw_job_process_info{pid,comm,state,wchan} = 1 (the process's own state and
// wchan), hw_job_process_threads{pid,state} and
// hw_job_process_wchan_threads{pid,wchan} (its threads, by state and by wchan).
class JobProcessCollector : public Collector {
 public:
  JobProcessCollector(std::string procfs, std::string job_id, JobProcessLimits limits = {})
      : procfs_(std::move(procfs)), job_id_(std::move(job_id)), limits_(limits) {}
  Expected<Families> Collect() override;

 private:
  std::string procfs_;
  std::string job_id_;
  JobProcessLimits limits_;
};

}  // namespace jobmon::exporter
