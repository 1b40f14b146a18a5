#pragma once
// Asking slurmstepd, through `scontrol listpids JOB NODE`, which processes
// are the job's on this node and which of them are its tasks: the
// job_processes collector's way to find them where no cgroup names the job
// (ProctrackType=proctrack/linuxproc), and where each task id comes from.
// One run at most every few seconds, under a deadline, its output bounded.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/exporter/slurm_listpids.h"

namespace jobmon::exporter {

struct ListPidsOptions {
  std::string scontrol = "scontrol";  // a path, or a name looked up on PATH
  std::string job_id;
  // The slurmd node name: scontrol's NodeName argument. It picks the step
  // sockets (<SlurmdSpoolDir>/<node>_<job>.<step>); without it scontrol
  // guesses from SLURMD_NODENAME or the hostname, which is wrong where
  // several slurmd share a host (the dev cluster).
  std::string node;
  // SLURM_CONF for scontrol; empty: Slurm's own default.
  std::string slurm_conf;
  std::chrono::milliseconds timeout{2000};
  size_t max_output = 1 << 20;
  // An answer is reused for this long, so a scrape does not always fork.
  std::chrono::milliseconds fresh_for{5000};
  // After a run that timed out or could not start: the next one waits this
  // long, so a hung or missing scontrol costs one deadline per minute, not
  // one per scrape.
  std::chrono::milliseconds retry_after_failure{60000};
};

struct ListPidsAnswer {
  std::vector<ListedPid> rows;  // the job's pids on the node (none: no step here, or no answer)
  // Why scontrol gave no usable answer: it could not be run, timed out, was
  // killed, or printed something other than its table. Empty when it
  // answered, including "no step of the job on this node" (exit 1, no row).
  std::string problem;
};

class ListPidsCommand {
 public:
  explicit ListPidsCommand(ListPidsOptions options) : options_(std::move(options)) {}
  // The answer of the last run while fresh, else of a new run (as this
  // process's user: never another's).
  const ListPidsAnswer& Get();
  size_t runs() const { return runs_; }

 private:
  ListPidsAnswer Run();

  ListPidsOptions options_;
  ListPidsAnswer last_;
  std::optional<std::chrono::steady_clock::time_point> next_run_;
  size_t runs_ = 0;
};

}  // namespace jobmon::exporter
