#include "jobmon/monitor/job_source.h"

#include <chrono>

#include "jobmon/common/run_command.h"

namespace jobmon::monitor {
namespace {

class SqueueJobSource : public JobSource {
 public:
  SqueueJobSource(std::string squeue, double timeout)
      : squeue_(std::move(squeue)), timeout_(timeout) {}

  Expected<std::vector<triage::SlurmJob>> ListJobs() override {
    auto result =
        RunCommand({squeue_, "--json"},
                   std::chrono::milliseconds(static_cast<int64_t>(timeout_ * 1000)), kMaxOutput);
    if (!result) return result.error();
    if (result->timed_out) {
      return Error{"squeue did not answer within " + std::to_string(timeout_) + "s"};
    }
    if (result->exit_code != 0) {
      // "slurm_load_jobs error: Unable to contact slurm controller" goes to stderr.
      return Error{"squeue exited with " + std::to_string(result->exit_code) +
                   " (controller unreachable?)"};
    }
    if (result->output.size() >= kMaxOutput) {
      return Error{"squeue output exceeds " + std::to_string(kMaxOutput >> 20) + " MiB"};
    }
    return triage::ParseSqueueJson(result->output);
  }

 private:
  static constexpr size_t kMaxOutput = size_t{1} << 30;  // ~5 KiB per job: 200k jobs
  std::string squeue_;
  double timeout_;
};

}  // namespace

std::unique_ptr<JobSource> MakeSqueueJobSource(std::string squeue, double timeout_seconds) {
  return std::make_unique<SqueueJobSource>(std::move(squeue), timeout_seconds);
}

}  // namespace jobmon::monitor
