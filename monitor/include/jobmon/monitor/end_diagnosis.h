#pragma once
// The diagnosis the monitor attaches to a job's alert at job end: run off
// the cycle thread (the alert goes out first, never held back), one job at
// a time, abandoned after a timeout (its cancel flag set, so the diagnosis
// stops at its next query and its read-only Prometheus is stopped). The
// cycle polls for finished ones and sends them as a follow-up of the
// incident. The diagnoser is injected: the daemon's runs `jobmon diagnose`
// as the job's user in a child process (child_diagnoser.h), which the
// timeout kills, so nothing the job's user controls can hold this thread,
// and with it the daemon's shutdown; tests give a fake.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/diagnosis_report.h"

namespace jobmon::monitor {

class EndDiagnosis {
 public:
  using Clock = std::chrono::steady_clock;
  struct Result {
    uint32_t job_id = 0;
    int64_t incident_id = 0;
    bool timed_out = false;
    std::string error;     // the diagnosis failed (or timed out): why
    std::string markdown;  // the report (diagnose::RenderMarkdown)
    std::string verdicts;  // one line per playbook (diagnose::VerdictLines)
  };

  EndDiagnosis(diagnose::ReportDiagnoser diagnoser, double timeout_seconds);
  EndDiagnosis(diagnose::TargetDiagnoser diagnoser, double timeout_seconds)
      : EndDiagnosis(diagnose::InProcess(std::move(diagnoser)), timeout_seconds) {}
  ~EndDiagnosis();  // cancels what runs and waits for it
  EndDiagnosis(const EndDiagnosis&) = delete;
  EndDiagnosis& operator=(const EndDiagnosis&) = delete;

  // Starts (or queues behind the running one) `target`, an archive or
  // diag dir; never blocks. `now`: the clock Poll is given (the monitor's).
  // `user`: the job's user, from Slurm, as whom the diagnosis reads.
  void Submit(uint32_t job_id, int64_t incident_id, std::string target,
              Clock::time_point now = Clock::now(), std::optional<JobUser> user = std::nullopt);
  // What finished, or was abandoned at the timeout, since the last call;
  // starts the next queued one.
  std::vector<Result> Poll(Clock::time_point now = Clock::now());
  size_t pending() const { return queue_.size() + (running_ ? 1 : 0); }

 private:
  struct Job {
    uint32_t job_id = 0;
    int64_t incident_id = 0;
    std::string target;
    std::optional<JobUser> user;
  };
  struct Running {
    Job job;
    Clock::time_point started;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<diagnose::DiagnosisReport> outcome =
        std::make_shared<diagnose::DiagnosisReport>();
    std::thread thread;
  };
  void Start(Job job, Clock::time_point now);

  diagnose::ReportDiagnoser diagnoser_;
  std::chrono::duration<double> timeout_;
  std::deque<Job> queue_;
  std::unique_ptr<Running> running_;
  // Abandoned at the timeout, still stopping: joined once done.
  std::vector<std::unique_ptr<Running>> stopping_;
};

}  // namespace jobmon::monitor
