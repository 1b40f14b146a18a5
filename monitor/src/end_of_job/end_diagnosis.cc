#include "jobmon/monitor/end_diagnosis.h"

namespace jobmon::monitor {

EndDiagnosis::EndDiagnosis(diagnose::ReportDiagnoser diagnoser, double timeout_seconds)
    : diagnoser_(std::move(diagnoser)), timeout_(timeout_seconds) {}

EndDiagnosis::~EndDiagnosis() {
  queue_.clear();
  if (running_) {
    running_->cancel->store(true);
    stopping_.push_back(std::move(running_));
  }
  for (auto& r : stopping_) {
    r->cancel->store(true);
    if (r->thread.joinable()) r->thread.join();
  }
}

void EndDiagnosis::Submit(uint32_t job_id, int64_t incident_id, std::string target,
                          Clock::time_point now, std::optional<JobUser> user) {
  Job job{job_id, incident_id, std::move(target), user};
  if (running_) {
    queue_.push_back(std::move(job));
  } else {
    Start(std::move(job), now);
  }
}

void EndDiagnosis::Start(Job job, Clock::time_point now) {
  running_ = std::make_unique<Running>();
  running_->job = std::move(job);
  running_->started = now;
  diagnose::TargetRequest request;
  request.argument = running_->job.target;
  request.playbooks = {"auto"};
  request.cancel = running_->cancel;
  request.cleanup_on_signal = false;  // the daemon's SIGTERM is the daemon's
  request.user = running_->job.user;
  request.job_ended = true;  // never its live Prometheus, whatever the manifest says
  // The thread owns copies of what it writes: an abandoned one may outlive
  // this object's interest in it, never the object itself (joined above).
  running_->thread = std::thread(
      [diagnoser = diagnoser_, request, outcome = running_->outcome, done = running_->done] {
        *outcome = diagnoser(request);
        done->store(true);
      });
}

std::vector<EndDiagnosis::Result> EndDiagnosis::Poll(Clock::time_point now) {
  std::vector<Result> out;
  for (auto it = stopping_.begin(); it != stopping_.end();) {
    if ((*it)->done->load()) {
      (*it)->thread.join();
      it = stopping_.erase(it);
    } else {
      ++it;
    }
  }
  if (running_ && running_->done->load()) {
    running_->thread.join();
    const diagnose::DiagnosisReport& o = *running_->outcome;
    Result r{running_->job.job_id, running_->job.incident_id, false, {}, {}, {}};
    if (o.status == diagnose::TargetOutcome::Status::kDiagnosed) {
      r.markdown = o.markdown;
      r.verdicts = o.verdicts;
    } else {
      r.error = o.error;
    }
    out.push_back(std::move(r));
    running_.reset();
  } else if (running_ && now - running_->started > timeout_) {
    running_->cancel->store(true);
    out.push_back({running_->job.job_id,
                   running_->job.incident_id,
                   true,
                   "abandoned after " + std::to_string(static_cast<int>(timeout_.count())) + "s",
                   {},
                   {}});
    stopping_.push_back(std::move(running_));
  }
  if (!running_ && !queue_.empty()) {
    Job next = std::move(queue_.front());
    queue_.pop_front();
    Start(std::move(next), now);
  }
  return out;
}

}  // namespace jobmon::monitor
