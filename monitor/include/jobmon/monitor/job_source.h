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
  // Recovery's actions on a job (recovery.h), as slurm::Client does them.
  virtual Expected<void> SignalJobSteps(uint32_t job_id, const std::string& signal) = 0;
  virtual Expected<void> RequeueExcluding(uint32_t job_id, const std::string& node) = 0;
  virtual Expected<void> CancelJob(uint32_t job_id, const std::string& reason) = 0;
  virtual Expected<void> DrainNode(const std::string& node, const std::string& reason) = 0;
};

std::unique_ptr<JobSource> MakeSlurmJobSource(slurm::Commands commands);

}  // namespace jobmon::monitor
