#pragma once
// The pure half of asking Slurm for a job's processes on this node:
// `scontrol listpids JOB NODE` read into rows, and each process's Slurm
// task (SLURM_PROCID, srun -l's label) from them. Running scontrol:
// listpids_command.h.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/exporter/process_wait.h"

namespace jobmon::exporter {

// One row of the table as Slurm 22.05 to 25.11 print it
// (tests/fixtures/slurm/listpids/, docs/exporter.md): per step, first each
// task's own pid with LOCALID (the task on this node) and GLOBALID
// (SLURM_PROCID), then every other pid of the step's process tracking
// container with "-" for both (a task's children, the batch script's srun).
struct ListedPid {
  unsigned pid = 0;
  std::string step;  // "0", "1+0" (a heterogeneous component), "batch", "extern", "interactive"
  std::optional<unsigned> local_task, global_task;
};

// The table scontrol prints: the header "PID JOBID STEPID LOCALID GLOBALID",
// then one whitespace-separated row per pid. Rows of another job are left
// out, and so are rows whose pid is not positive (22.05 lists the extern
// step's task as pid -1). Empty text, a missing header or a row of another
// shape is an error naming the line. 22.05 prints the header alone when the
// job has no step on the node; 25.11 prints nothing.
Expected<std::vector<ListedPid>> ParseListPids(std::string_view text, std::string_view job_id);

// pid -> task, from the rows of numbered steps (srun's; the batch and
// extern steps' "task 0" is the batch script or Slurm's own, not a rank).
std::map<unsigned, unsigned> TaskPids(const std::vector<ListedPid>& rows);

// pid -> task for each of `processes` that is a task or descends from one:
// its own task, else that of its nearest ancestor that is a task, found by
// walking the ppid of `processes`' stat lines, at most `max_depth` parents
// up (a parent outside them ends the walk, unless it is a task itself).
// A process with no such ancestor is left out.
inline constexpr size_t kMaxTaskAncestors = 32;
std::map<unsigned, unsigned> TasksOf(const std::vector<PidStat>& processes,
                                     const std::map<unsigned, unsigned>& task_pids,
                                     size_t max_depth = kMaxTaskAncestors);

}  // namespace jobmon::exporter
