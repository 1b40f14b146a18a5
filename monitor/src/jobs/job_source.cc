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

 private:
  slurm::Client client_;
};

}  // namespace

std::unique_ptr<JobSource> MakeSlurmJobSource(slurm::Commands commands) {
  return std::make_unique<SlurmJobSource>(std::move(commands));
}

}  // namespace jobmon::monitor
