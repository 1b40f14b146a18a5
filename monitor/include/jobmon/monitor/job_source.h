#pragma once
// Where the monitor learns which jobs exist and where their nodes are: an
// interface, so the daemon is tested against recorded Slurm answers and a
// controller that does not answer. The Slurm implementation asks
// `squeue --json` (running and recently finished jobs, within the
// controller's MinJobAge) and `sinfo --json` (the nodes' NodeAddr).

#include <memory>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/monitor/slurm_nodes.h"
#include "jobmon/triage/slurm_jobs.h"

namespace jobmon::monitor {

class JobSource {
 public:
  virtual ~JobSource() = default;
  // Every job the controller knows; an error when it did not answer.
  virtual Expected<std::vector<triage::SlurmJob>> ListJobs() = 0;
  // Every node's address as Slurm has it; an error when it did not answer.
  virtual Expected<NodeAddresses> ListNodeAddresses() = 0;
};

std::unique_ptr<JobSource> MakeSqueueJobSource(std::string squeue, std::string sinfo,
                                               double timeout_seconds);

}  // namespace jobmon::monitor
