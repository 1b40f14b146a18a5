// The Monitor's cycle (monitor.h): construction, SIGHUP, Cycle() and what its steps share.
#include "jobmon/monitor/monitor.h"

#include "evidence/evidence_feed.h"
#include "jobmon/monitor/child_diagnoser.h"
#include "jobmon/monitor/log_follower.h"

namespace jobmon::monitor {
namespace {

diagnose::ReportDiagnoser DefaultDiagnoser(const MonitorConfig& config) {
  ChildDiagnoserOptions options;
  options.jobmon_binary = config.jobmon_binary;
  return ChildDiagnoser(options);
}

}  // namespace

Monitor::Monitor(MonitorConfig config, StateStore& store, JobSource& source,
                 alerts::Notifier& notifier, EventLog& log, diagnose::ReportDiagnoser diagnoser)
    : config_(std::move(config)),
      store_(store),
      source_(source),
      notifier_(notifier),
      log_(log),
      outage_(config_.slurm_vanish_confirm, config_.slurm_outage_alert),
      child_diagnoser_(!diagnoser),
      diagnoser_(diagnoser ? std::move(diagnoser) : DefaultDiagnoser(config_)),
      followup_(std::make_unique<DiagnosisFollowUp>(diagnoser_, config_.diagnose_timeout)) {
  feed_ = MakeEvidenceFeed(MakeFeedContext());
  auto scanner = triage::LogScanner::Default();
  if (scanner) {
    scanner_ = std::move(scanner.value());
  } else {
    log_.Error("triage_unavailable", {{"error", scanner.error().message}});
  }
}

Monitor::~Monitor() = default;

void Monitor::Reconfigure(MonitorConfig config) {
  // A new diagnose_timeout or jobmon_binary applies once no diagnosis is under way.
  const bool changed = config.diagnose_timeout != config_.diagnose_timeout ||
                       (child_diagnoser_ && config.jobmon_binary != config_.jobmon_binary);
  if (changed && followup_->pending() == 0) {
    if (child_diagnoser_) diagnoser_ = DefaultDiagnoser(config);
    followup_ = std::make_unique<DiagnosisFollowUp>(diagnoser_, config.diagnose_timeout);
  }
  const bool evidence_changed = config.evidence != config_.evidence;
  config_ = std::move(config);
  if (evidence_changed) feed_ = MakeEvidenceFeed(MakeFeedContext());
  next_slurm_poll_ = 0;  // selections may have changed
}

FeedContext Monitor::MakeFeedContext() {
  return {config_, source_, log_, stats_,
          [this](uint32_t job_id, const std::string& event, const std::string& error) {
            if (auto found = jobs_.find(job_id); found != jobs_.end()) {
              WarnOnce(found->second, event, error);
            }
          }};
}

void Monitor::Check(const Expected<void>& result, const char* what) {
  if (!result) log_.Error("state_store", {{"op", what}, {"error", result.error().message}});
}

void Monitor::GatherEvidence(double now) {
  std::vector<FeedJob> followed;
  for (auto& [id, t] : jobs_) {
    if (t.ended || !t.window || !t.user) continue;
    const bool heartbeat_pending = t.progress->heartbeat_seen_at() && !t.heartbeat_handled;
    const bool power_baseline = t.power_baseline || t.window->HasRestoredPower();
    followed.push_back({t.record, *t.user, *t.progress, *t.window, heartbeat_pending,
                        t.open.has_value(), power_baseline, t.tunnel_command});
  }
  feed_->Gather(followed, now);
}

void Monitor::WarnOnce(Tracked& t, const std::string& event, const std::string& error) {
  constexpr size_t kMaxWarningsPerJob = 32;
  if (t.warned.size() >= kMaxWarningsPerJob || !t.warned.insert(event + " " + error).second) return;
  log_.Warn(event, {{"job", std::to_string(t.record.job_id)}, {"error", error}});
}

void Monitor::Cycle(double now) {
  const auto started = std::chrono::steady_clock::now();
  ++cycle_number_;
  // Waiting on Slurm and on exporters, and reading the logs of jobs that
  // ended, happen outside the transaction, so `jobmon watch` and `jobmon
  // status` never wait behind it.
  auto listed = FetchJobsIfDue(now);
  if (feed_->NeedsProgressFirst()) PollLogs(now);
  GatherEvidence(now);
  if (listed && *listed) ScanEndingJobs(**listed);
  const std::vector<DiagnosisOutcome> diagnosed = PollDiagnoses(now);
  Check(store_.Begin(), "begin");
  if (listed) RefreshJobs(now, *listed);
  PollJobs(now);
  SaveBaselines(now);
  for (const DiagnosisOutcome& outcome : diagnosed) ApplyDiagnosis(outcome, now);
  ForgetEndedJobs(now);
  Check(store_.Commit(), "commit");
  RecoverJobs(now);
  RecordCycle(started);
}

std::optional<Expected<std::vector<slurm::SlurmJob>>> Monitor::FetchJobsIfDue(double now) {
  if (now < next_slurm_poll_) return std::nullopt;
  return FetchJobs(now);
}

void Monitor::PollJobs(double now) {
  for (auto& [id, t] : jobs_) {
    if (!t.ended) PollJob(t, now);
  }
}

void Monitor::RecordCycle(std::chrono::steady_clock::time_point started) {
  stats_.jobs_tracked = jobs_.size();
  stats_.logs_kept_open = LogFollower::KeptOpen();
  stats_.diag_jobs = 0;
  for (const auto& [id, t] : jobs_) {
    if (t.window) ++stats_.diag_jobs;
  }
  stats_.diagnoses_pending = followup_->pending();
  ++stats_.cycles;
  stats_.last_cycle_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void Monitor::Notify(const alerts::Alert& alert) {
  if (auto sent = notifier_.Notify(alert); !sent) {
    ++stats_.notify_failures;
    log_.Error(
        "notify_failed",
        {{"notifier", notifier_.name()}, {"key", alert.key}, {"error", sent.error().message}});
  }
}

}  // namespace jobmon::monitor
