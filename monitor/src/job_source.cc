#include "jobmon/monitor/job_source.h"

#include <chrono>

#include "jobmon/common/run_command.h"

namespace jobmon::monitor {
namespace {

class SqueueJobSource : public JobSource {
 public:
  SqueueJobSource(std::string squeue, std::string sinfo, double timeout)
      : squeue_(std::move(squeue)), sinfo_(std::move(sinfo)), timeout_(timeout) {}

  Expected<std::vector<triage::SlurmJob>> ListJobs() override {
    auto output = Ask(squeue_);
    if (!output) return output.error();
    return triage::ParseSqueueJson(*output);
  }

  Expected<NodeAddresses> ListNodeAddresses() override {
    auto output = Ask(sinfo_);
    if (!output) return output.error();
    auto nodes = ParseSinfoJson(*output);
    if (!nodes) return nodes.error();
    return ResolveNodeAddresses(*nodes, ResolveHost);
  }

 private:
  // `program --json`'s output, or why not.
  Expected<std::string> Ask(const std::string& program) const {
    auto result =
        RunCommand({program, "--json"},
                   std::chrono::milliseconds(static_cast<int64_t>(timeout_ * 1000)), kMaxOutput);
    if (!result) return result.error();
    if (result->timed_out) {
      return Error{program + " did not answer within " + std::to_string(timeout_) + "s"};
    }
    if (result->exit_code != 0) {
      // "slurm_load_jobs error: Unable to contact slurm controller" goes to stderr.
      return Error{program + " exited with " + std::to_string(result->exit_code) +
                   " (controller unreachable?)"};
    }
    if (result->output.size() >= kMaxOutput) {
      return Error{program + " output exceeds " + std::to_string(kMaxOutput >> 20) + " MiB"};
    }
    return std::move(result->output);
  }

  static constexpr size_t kMaxOutput = size_t{1} << 30;  // ~5 KiB per job: 200k jobs
  std::string squeue_, sinfo_;
  double timeout_;
};

}  // namespace

std::unique_ptr<JobSource> MakeSqueueJobSource(std::string squeue, std::string sinfo,
                                               double timeout_seconds) {
  return std::make_unique<SqueueJobSource>(std::move(squeue), std::move(sinfo), timeout_seconds);
}

}  // namespace jobmon::monitor
