#include "jobmon/monitor/job_source.h"

namespace jobmon::monitor {
namespace {

class SlurmJobSource : public JobSource {
 public:
  explicit SlurmJobSource(slurm::Commands commands) : client_(std::move(commands)) {}

  Expected<std::vector<slurm::SlurmJob>> ListJobs() override { return client_.Jobs(); }

  Expected<NodeAddresses> ListNodeAddresses() override {
    auto nodes = client_.Nodes();
    if (!nodes) return nodes.error();
    return slurm::ResolveNodeAddresses(*nodes, slurm::ResolveHost);
  }
  Expected<void> SignalJobSteps(uint32_t job_id, const std::string& signal) override {
    return client_.SignalJobSteps(job_id, signal);
  }
  Expected<void> RequeueExcluding(uint32_t job_id, const std::string& node) override {
    return client_.RequeueExcluding(job_id, node);
  }
  Expected<void> CancelJob(uint32_t job_id, const std::string& reason) override {
    return client_.CancelJob(job_id, reason);
  }
  Expected<void> DrainNode(const std::string& node, const std::string& reason) override {
    return client_.DrainNode(node, reason);
  }

 private:
  slurm::Client client_;
};

}  // namespace

std::unique_ptr<JobSource> MakeSlurmJobSource(slurm::Commands commands) {
  return std::make_unique<SlurmJobSource>(std::move(commands));
}

}  // namespace jobmon::monitor
