#include "jobmon/monitor/end_diagnosis.h"

#include <fmt/format.h>

#include <algorithm>

namespace jobmon::monitor {

EndDiagnosis::EndDiagnosis(diagnose::ReportDiagnoser diagnoser, double timeout_seconds,
                           Limits limits)
    : diagnoser_(std::move(diagnoser)), timeout_(timeout_seconds), limits_(limits) {}

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
  Job job{job_id, incident_id, std::move(target), user, now};
  if (std::string why = Overflow(job); !why.empty()) {
    dropped_.push_back({job.job_id, job.incident_id, false, "dropped: " + why, {}, {}});
  } else if (running_) {
    queue_.push_back(std::move(job));
  } else {
    Start(std::move(job));
  }
}

std::string EndDiagnosis::Overflow(const Job& job) const {
  if (held() >= limits_.total)
    return fmt::format("{} diagnoses already waiting or running, the most the monitor keeps",
                       held());
  // A job without a known user counts with the others that have none.
  auto same_user = [&job](const Job& other) {
    return other.user.has_value() == job.user.has_value() &&
           (!job.user || other.user->uid == job.user->uid);
  };
  size_t mine = static_cast<size_t>(std::count_if(queue_.begin(), queue_.end(), same_user));
  if (running_ && same_user(running_->job)) ++mine;
  if (mine >= limits_.per_user)
    return fmt::format("uid {} has {} diagnoses waiting or running, the most one user may have",
                       job.user ? std::to_string(job.user->uid) : std::string("unknown"), mine);
  return "";
}

EndDiagnosis::Result EndDiagnosis::TimedOut(const Job& job, const std::string& where) const {
  return {job.job_id,
          job.incident_id,
          true,
          "abandoned after " + std::to_string(static_cast<int>(timeout_.count())) + "s" + where,
          {},
          {}};
}

void EndDiagnosis::Start(Job job) {
  running_ = std::make_unique<Running>();
  running_->job = std::move(job);
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
  std::vector<Result> out = std::move(dropped_);
  dropped_.clear();
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
  } else if (running_ && now - running_->job.submitted > timeout_) {
    running_->cancel->store(true);
    out.push_back(TimedOut(running_->job, ""));
    stopping_.push_back(std::move(running_));
  }
  // The timeout counts from Submit: one that waited it out in the queue
  // never starts.
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (now - it->submitted > timeout_) {
      out.push_back(TimedOut(*it, ", waiting behind other diagnoses"));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  if (!running_ && !queue_.empty()) {
    Job next = std::move(queue_.front());
    queue_.pop_front();
    Start(std::move(next));
  }
  return out;
}

}  // namespace jobmon::monitor
