#pragma once
// job_processes: what each of the Slurm job's processes on this node waits
// on in the kernel, from procfs only (docs/exporter.md says what is read).

#include <cstddef>
#include <functional>
#include <string>

#include "jobmon/exporter/collector.h"
#include "jobmon/exporter/listpids_command.h"

namespace jobmon::exporter {

// Bounds on the series: at most `processes` processes (the ones with the
// most threads), `threads` threads read per process, and `wchans` wait
// channels per process (the rest summed as "other").
struct JobProcessLimits {
  size_t processes = 64;
  size_t threads = 512;
  size_t wchans = 4;
};

// Slurm's answer to `scontrol listpids` (ListPidsCommand::Get; a test's
// fixture); empty: not asked.
using ListPidsSource = std::function<ListPidsAnswer()>;

// The job's processes are those whose cgroup names job_<job_id> (JobPids,
// gpu_selection.h); where none does, the pids `listpids` lists. Each
// process's Slurm task comes from `listpids` (TasksOf, slurm_listpids.h).
// Series: hw_job_processes (found),
// hw_job_process_info{pid,comm,state,wchan,task} = 1 (the process's own
// state and wchan, its task or ""), hw_job_process_threads{pid,state} and
// hw_job_process_wchan_threads{pid,wchan} (its threads, by state and by wchan).
class JobProcessCollector : public Collector {
 public:
  JobProcessCollector(std::string procfs, std::string job_id, JobProcessLimits limits = {},
                      ListPidsSource listpids = {})
      : procfs_(std::move(procfs)),
        job_id_(std::move(job_id)),
        limits_(limits),
        listpids_(std::move(listpids)) {}
  Expected<Families> Collect() override;

 private:
  std::string procfs_;
  std::string job_id_;
  JobProcessLimits limits_;
  ListPidsSource listpids_;
};

}  // namespace jobmon::exporter
