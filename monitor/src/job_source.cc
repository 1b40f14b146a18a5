#include "jobmon/monitor/job_source.h"

#include <chrono>

#include "jobmon/common/run_command.h"

namespace jobmon::monitor {
namespace {

class ScontrolJobSource : public JobSource {
 public:
  ScontrolJobSource(std::string scontrol, double timeout)
      : scontrol_(std::move(scontrol)), timeout_(timeout) {}

  Expected<std::vector<SlurmJob>> ListJobs() override {
    auto result =
        RunCommand({scontrol_, "-o", "show", "job"},
                   std::chrono::milliseconds(static_cast<int64_t>(timeout_ * 1000)), kMaxOutput);
    if (!result) return result.error();
    if (result->timed_out) {
      return Error{"scontrol did not answer within " + std::to_string(timeout_) + "s"};
    }
    if (result->exit_code != 0) {
      // "slurm_load_jobs error: Unable to contact slurm controller" goes to
      // stderr; an empty queue is exit 0 with "No jobs in the system".
      return Error{"scontrol exited with " + std::to_string(result->exit_code) +
                   " (controller unreachable?)"};
    }
    if (result->output.size() >= kMaxOutput) {
      return Error{"scontrol output exceeds " + std::to_string(kMaxOutput >> 20) + " MiB"};
    }
    return ParseScontrolJobs(result->output);
  }

 private:
  static constexpr size_t kMaxOutput = size_t{512} << 20;  // ~2 KiB per job: 250k jobs
  std::string scontrol_;
  double timeout_;
};

}  // namespace

std::unique_ptr<JobSource> MakeScontrolJobSource(std::string scontrol, double timeout_seconds) {
  return std::make_unique<ScontrolJobSource>(std::move(scontrol), timeout_seconds);
}

}  // namespace jobmon::monitor
