#pragma once
// Where the ranks of a stalled job run and what each waits on: a rank that
// srun -l labels with its task id (triage::RankId::task) is on the host whose
// exporter reports a process of that task (hw_job_process_info's `task`,
// docs/exporter.md). Pure: the monitor hands it the job's ranks and its
// hosts' evidence.

#include <string>
#include <vector>

#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/triage/rank_progress.h"

namespace jobmon::monitor {

struct RankWaits {
  // RankProgress::Describe of the rank(s) that stopped first, each with its
  // task and host where known: "rank 1 (task 1 on node2) stopped first: at
  // step 29, 1 step behind the other 2 ranks (at step 30)"; "" when no rank
  // stopped first.
  std::string stopped;
  // The hosts the ranks that stopped first run on (by their task labels),
  // sorted; empty where none is known.
  std::vector<std::string> stopped_hosts;
  // One line per task found on a host, those that stopped first first, then
  // by task: "task 1 on node2: python3 pid 4242 S in hrtimer_nanosleep
  // (...)", its processes with the most threads first; at most
  // kMaxRankWaitLines.
  std::vector<std::string> waits;
};
inline constexpr size_t kMaxRankWaitLines = 8;
inline constexpr size_t kProcessesPerTask = 3;

// Nothing with fewer than two ranks printing steps (nothing to compare).
RankWaits DescribeRankWaits(const triage::RankProgress& ranks,
                            const std::vector<HostEvidence>& hosts);

}  // namespace jobmon::monitor
