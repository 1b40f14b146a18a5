#pragma once
// The diagnosis the monitor attaches to a job's alert at job end: run off
// the cycle thread (the alert goes out first, never held back), one job at
// a time, abandoned after a timeout counted from its submission, the wait
// in the queue included (its cancel flag set, so the diagnosis stops at its
// next query and its read-only Prometheus is stopped). The queue is
// bounded per user and in all: one user ending many jobs cannot hold the
// others' diagnoses back, nor grow the daemon's memory. The
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

// How many end-of-job diagnoses may wait or run at once: one job's user's,
// and all.
struct EndDiagnosisLimits {
  size_t per_user = 4;
  size_t total = 32;
};

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
  using Limits = EndDiagnosisLimits;

  EndDiagnosis(diagnose::ReportDiagnoser diagnoser, double timeout_seconds, Limits limits);
  EndDiagnosis(diagnose::ReportDiagnoser diagnoser, double timeout_seconds)
      : EndDiagnosis(std::move(diagnoser), timeout_seconds, Limits{}) {}
  EndDiagnosis(diagnose::TargetDiagnoser diagnoser, double timeout_seconds, Limits limits = {})
      : EndDiagnosis(diagnose::InProcess(std::move(diagnoser)), timeout_seconds, limits) {}
  ~EndDiagnosis();  // cancels what runs and waits for it
  EndDiagnosis(const EndDiagnosis&) = delete;
  EndDiagnosis& operator=(const EndDiagnosis&) = delete;

  // Starts (or queues behind the running one) `target`, an archive or
  // diag dir; never blocks. `now`: the clock Poll is given (the monitor's);
  // the timeout counts from it. `user`: the job's user, from Slurm, as whom
  // the diagnosis reads. Beyond a limit it is dropped: the next Poll
  // reports it with the reason in `error`.
  void Submit(uint32_t job_id, int64_t incident_id, std::string target,
              Clock::time_point now = Clock::now(), std::optional<JobUser> user = std::nullopt);
  // What finished, was dropped, or was abandoned at the timeout (running or
  // still queued) since the last call; starts the next queued one.
  std::vector<Result> Poll(Clock::time_point now = Clock::now());
  // Waiting, running, or dropped and not yet reported.
  size_t pending() const { return held() + dropped_.size(); }

 private:
  struct Job {
    uint32_t job_id = 0;
    int64_t incident_id = 0;
    std::string target;
    std::optional<JobUser> user;
    Clock::time_point submitted;
  };
  struct Running {
    Job job;
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<diagnose::DiagnosisReport> outcome =
        std::make_shared<diagnose::DiagnosisReport>();
    std::thread thread;
  };
  size_t held() const { return queue_.size() + (running_ ? 1 : 0); }
  void Start(Job job);
  // Why `job` cannot be taken now; empty: it can.
  std::string Overflow(const Job& job) const;
  Result TimedOut(const Job& job, const std::string& where) const;

  diagnose::ReportDiagnoser diagnoser_;
  std::chrono::duration<double> timeout_;
  Limits limits_;
  std::deque<Job> queue_;
  std::vector<Result> dropped_;  // reported by the next Poll
  std::unique_ptr<Running> running_;
  // Abandoned at the timeout, still stopping: joined once done.
  std::vector<std::unique_ptr<Running>> stopping_;
};

}  // namespace jobmon::monitor
