#pragma once
// Where the monitor learns which jobs exist and where their nodes are: an
// interface, so the daemon is tested against recorded Slurm answers and a
// controller that does not answer. The Slurm implementation is
// slurm/client.h's: `squeue -t all --json` (running and recently finished
// jobs, within the controller's MinJobAge) and the nodes' NodeAddr.

#include <memory>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/slurm/client.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/slurm/nodes.h"

namespace jobmon::monitor {

using slurm::NodeAddresses;

class JobSource {
 public:
  virtual ~JobSource() = default;
  // Every job the controller knows; an error when it did not answer, or
  // answered with errors.
  virtual Expected<std::vector<slurm::SlurmJob>> ListJobs() = 0;
  // Every node's address as Slurm has it; an error when it did not answer.
  virtual Expected<NodeAddresses> ListNodeAddresses() = 0;
};

std::unique_ptr<JobSource> MakeSlurmJobSource(slurm::Commands commands);

}  // namespace jobmon::monitor
