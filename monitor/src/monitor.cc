#include "jobmon/monitor/monitor.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "evidence/evidence_feed.h"
#include "jobmon/chart/gnuplot_chart.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/monitor/child_diagnoser.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/divergence.h"
#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/heartbeat_classifier.h"
#include "jobmon/monitor/incident_alert.h"
#include "jobmon/monitor/incident_picture.h"
#include "jobmon/monitor/incident_policy.h"
#include "jobmon/monitor/rank_waits.h"
#include "jobmon/monitor/recovery.h"
#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/triage/triage_job.h"

namespace jobmon::monitor {
namespace {

std::string Seconds(double s) { return fmt::format("{:.1f}", s); }

std::optional<OpenIncidentFacts> FactsOf(const std::optional<IncidentRecord>& open) {
  if (!open) return std::nullopt;
  return OpenIncidentFacts{open->klass, open->opened_at};
}

// Watch requests dropped in one cycle, logged as one line per kind: a flood
// of made-up job ids costs the log one line, not one per id.
class DroppedWatches {
 public:
  void Add(uint32_t job_id, const std::optional<uint32_t>& uid) {
    if (++count_ <= kShown) jobs_ += (jobs_.empty() ? "" : ",") + std::to_string(job_id);
    uids_.insert(uid ? std::to_string(*uid) : "admin");
  }
  void Log(EventLog& log, std::string_view event) const {
    if (count_ == 0) return;
    std::string uids;
    for (const std::string& u : uids_) uids += (uids.empty() ? "" : ",") + u;
    const std::string more = count_ > kShown ? fmt::format(" (+{} more)", count_ - kShown) : "";
    log.Warn(event,
             {{"count", std::to_string(count_)}, {"jobs", jobs_ + more}, {"asked_by_uids", uids}});
  }

 private:
  static constexpr size_t kShown = 10;
  size_t count_ = 0;
  std::string jobs_;
  std::set<std::string> uids_;
};

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

Monitor::Tracked Monitor::NewTracked(const JobRecord& record, double job_start) const {
  Tracked t;
  t.record = record;
  t.progress = std::make_unique<JobProgress>(record.job_id, record.log_path, config_.stall,
                                             job_start, config_.slowdown);
  if (!record.diag_dir.empty()) t.window = std::make_unique<MetricWindow>(config_.window_seconds);
  return t;
}

Expected<void> Monitor::Restore(double now) {
  auto jobs = store_.ListJobs();
  if (!jobs) return jobs.error();
  for (const JobRecord& record : *jobs) {
    if (record.ended_at) continue;
    Tracked t = NewTracked(record, record.start_time.value_or(record.first_seen));
    // Slurm's uid arrives with the first answer; until then the name says it.
    if ((t.user = LookUpJobUser(record.user))) t.progress->SetUser(*t.user);
    if (auto progress = store_.GetProgress(record.job_id); progress && *progress) {
      t.progress->Restore(**progress);
      t.saved = **progress;
    }
    if (auto open = store_.OpenIncidentOf(record.job_id); open && *open) {
      t.open = **open;
      t.heartbeat_handled = t.open->klass.starts_with("heartbeat/");
    }
    // The training's evidence the window had before the restart (a stall
    // after it is judged against that, not against no baseline at all).
    if (t.window) {
      if (auto baselines = store_.HostBaselines(record.job_id); baselines) {
        for (const auto& [host, baseline] : *baselines) t.window->RestoreBaseline(host, baseline);
      } else {
        Check(baselines.error(), "load host baselines");
      }
    }
    log_.Info("job_restored", {{"job", std::to_string(record.job_id)},
                               {"source", record.source},
                               {"open_incident", t.open ? t.open->klass : ""}});
    jobs_.emplace(record.job_id, std::move(t));
  }
  // An outage the daemon was in when it stopped goes on from then.
  if (auto since = store_.GetDaemonState("slurm_unreachable_since"); since && *since) {
    auto why = store_.GetDaemonState("slurm_unreachable_why");
    auto alerted = store_.GetDaemonState("slurm_outage_alerted");
    outage_.Restore(std::strtod((*since)->c_str(), nullptr), alerted && *alerted,
                    why && *why ? **why : "");
    slurm_warned_ = true;
  }
  ResumeDiagnoses(now);
  return {};
}

void Monitor::Track(const slurm::SlurmJob& job, const std::string& source,
                    const std::string& log_path, const std::string& diag_dir, double now) {
  JobRecord record;
  record.job_id = job.job_id;
  record.name = job.name;
  record.user = job.user;
  record.log_path = log_path;
  record.diag_dir = diag_dir;
  record.source = source;
  record.slurm_state = job.state;
  record.first_seen = now;
  record.last_seen = now;
  record.partition = job.partition;
  record.node_list = job.node_list;
  record.start_time = job.start_time;
  record.uid = job.uid;
  Tracked t = NewTracked(record, record.start_time.value_or(now));
  t.user = JobUser{job.uid, job.gid};
  t.progress->SetUser(*t.user);
  Check(store_.UpsertJob(t.record), "upsert job");
  log_.Info("job_tracked", {{"job", std::to_string(job.job_id)},
                            {"name", job.name},
                            {"user", job.user},
                            {"source", source},
                            {"log", log_path},
                            {"diag_dir", diag_dir}});
  jobs_.emplace(job.job_id, std::move(t));
}

Expected<std::vector<slurm::SlurmJob>> Monitor::FetchJobs(double now) {
  const auto started = std::chrono::steady_clock::now();
  next_slurm_poll_ = now + config_.slurm_poll_interval;
  Expected<std::vector<slurm::SlurmJob>> listed = Error{"not asked"};
  for (int attempt = 1; attempt <= config_.slurm_retries; ++attempt) {
    listed = source_.ListJobs();
    if (listed) break;
    log_.Warn("slurm_retry", {{"attempt", std::to_string(attempt)},
                              {"of", std::to_string(config_.slurm_retries)},
                              {"error", listed.error().message}});
    if (attempt < config_.slurm_retries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
    }
  }
  stats_.last_slurm_poll_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return listed;
}

void Monitor::RefreshJobs(double now, const Expected<std::vector<slurm::SlurmJob>>& listed) {
  // job id -> who asked (nullopt: root or an admin); one request each.
  std::map<uint32_t, std::vector<std::optional<uint32_t>>> requests;
  if (auto w = store_.WatchRequests()) {
    for (const WatchRequest& r : *w) requests[r.job_id].push_back(r.uid);
  }
  std::set<uint32_t> watched;
  for (const auto& [id, askers] : requests) watched.insert(id);
  if (!listed) {
    // A controller that does not answer says nothing about the jobs: keep
    // following them as they were, raise nothing, warn.
    ++stats_.slurm_failures;
    outage_.Failed(now, listed.error().message);
    NoteSlurmOutage(now);
    return;
  }
  {
    std::set<uint32_t> ids;
    for (const slurm::SlurmJob& job : *listed) ids.insert(job.job_id);
    size_t live = 0, present = 0;
    for (const auto& [id, t] : jobs_) {
      if (t.ended) continue;
      ++live;
      present += ids.count(id);
    }
    if (!outage_.Answered(now, live, present)) {
      NoteSlurmOutage(now);
      return;
    }
  }
  NoteSlurmAnswered(now);

  std::set<uint32_t> seen;
  DroppedWatches refused, unknown;
  for (const slurm::SlurmJob& job : *listed) {
    seen.insert(job.job_id);
    auto found = jobs_.find(job.job_id);
    if (found != jobs_.end() && watched.count(job.job_id)) {
      Check(store_.RemoveWatch(job.job_id), "remove watch");  // followed already
    }
    if (found == jobs_.end()) {
      // A user's watch request (through the socket API) holds for their own
      // jobs only; an admin's, or the owner's, beside it still holds.
      if (auto r = requests.find(job.job_id); r != requests.end()) {
        std::erase_if(r->second, [&](const std::optional<uint32_t>& uid) {
          if (!uid || *uid == job.uid) return false;
          refused.Add(job.job_id, uid);
          Check(store_.RemoveWatch(job.job_id, uid), "remove watch");
          return true;
        });
        if (r->second.empty()) watched.erase(job.job_id);
      }
      auto discovered = Discover(job, config_, watched, [&job](const std::string& dir) {
        return HasReadableManifest(dir, JobUser{job.uid, job.gid});
      });
      if (!discovered) continue;
      // A job that had already ended before this daemon first saw it
      // (restart) is only tracked if the store does not know it yet.
      if (auto known = store_.GetJob(job.job_id); known && *known && (*known)->ended_at) continue;
      Track(job, discovered->source, discovered->log_path, discovered->diag_dir, now);
      found = jobs_.find(job.job_id);
      if (watched.count(job.job_id)) Check(store_.RemoveWatch(job.job_id), "remove watch");
    }
    Tracked& t = found->second;
    t.record.last_seen = now;
    if (!t.user || t.user->uid != job.uid || t.user->gid != job.gid) {
      t.user = JobUser{job.uid, job.gid};
      t.progress->SetUser(*t.user);
    }
    const bool uid_learnt = t.record.uid != job.uid;  // rows from before schema 4
    t.record.uid = job.uid;
    const bool state_changed = t.record.slurm_state != job.state;
    if (state_changed) {
      log_.Info(
          "job_state",
          {{"job", std::to_string(job.job_id)}, {"from", t.record.slurm_state}, {"to", job.state}});
      t.record.slurm_state = job.state;
    }
    if (state_changed || uid_learnt) Check(store_.UpsertJob(t.record), "upsert job");
    t.slurm_exit_code = job.exit_code;
    if (!t.ended && slurm::IsTerminalState(job.state)) OnEnded(t, job.state, now);
  }
  // Gone from a controller that answered: purged after MinJobAge.
  for (auto& [id, t] : jobs_) {
    if (!t.ended && !seen.count(id)) OnEnded(t, t.record.slurm_state + "?", now);
  }
  for (uint32_t id : watched) {
    if (!seen.count(id) && !jobs_.count(id)) {
      for (const auto& uid : requests[id]) unknown.Add(id, uid);
      Check(store_.RemoveWatch(id), "remove watch");
    }
  }
  refused.Log(log_, "watch_refused");
  unknown.Log(log_, "watch_unknown_job");
}

void Monitor::GatherEvidence(double now) {
  std::vector<FeedJob> followed;
  for (auto& [id, t] : jobs_) {
    if (t.ended || !t.window || !t.user) continue;
    const bool heartbeat_pending = t.progress->heartbeat_seen_at() && !t.heartbeat_handled;
    followed.push_back(
        {t.record, *t.user, *t.progress, *t.window, heartbeat_pending, t.tunnel_command});
  }
  feed_->Gather(followed, now);
}

void Monitor::NoteSlurmOutage(double now) {
  stats_.slurm_reachable = false;
  stats_.slurm_unreachable_seconds = now - outage_.since().value_or(now);
  if (!slurm_warned_) {
    log_.Warn("slurm_unreachable",
              {{"error", outage_.why()},
               {"action", "keeping every job and incident as it is; none is ended for this"}});
    slurm_warned_ = true;
    Check(store_.SetDaemonState("slurm_unreachable_since",
                                std::to_string(outage_.since().value_or(now)), now),
          "record the outage");
  }
  Check(store_.SetDaemonState("slurm_unreachable_why", outage_.why(), now), "record the outage");
  if (!outage_.AlertDue(now)) return;
  alerts::Alert alert;
  alert.status = "firing";
  alert.cluster = config_.cluster;
  alert.klass = "monitor/slurm-unreachable";
  alert.key = alerts::AlertKey(config_.cluster, 0, alert.klass);
  alert.opened_at = outage_.since().value_or(now);
  alert.at = now;
  alert.summary = "Slurm has not answered for " +
                  std::to_string(static_cast<int64_t>(now - alert.opened_at)) + " s (" +
                  outage_.why() + "); every job and incident is kept as it was until it does.";
  Notify(alert);
  outage_.MarkAlerted();
  Check(store_.SetDaemonState("slurm_outage_alerted", "1", now), "record the outage alert");
}

void Monitor::NoteSlurmAnswered(double now) {
  if (slurm_warned_) {
    log_.Info("slurm_reachable_again",
              {{"unreachable_s",
                std::to_string(static_cast<int64_t>(stats_.slurm_unreachable_seconds))}});
    Check(store_.ClearDaemonState("slurm_unreachable_since"), "clear the outage");
    Check(store_.ClearDaemonState("slurm_unreachable_why"), "clear the outage");
  }
  slurm_warned_ = false;
  stats_.slurm_reachable = true;
  stats_.slurm_unreachable_seconds = 0;
  if (!outage_.ResolveDue()) return;
  alerts::Alert alert;
  alert.status = "resolved";
  alert.cluster = config_.cluster;
  alert.klass = "monitor/slurm-unreachable";
  alert.key = alerts::AlertKey(config_.cluster, 0, alert.klass);
  alert.at = now;
  alert.close_reason = "resumed";
  alert.summary = "Slurm answers again; the jobs that ended meanwhile got their final state.";
  Notify(alert);
  outage_.MarkResolved();
  Check(store_.ClearDaemonState("slurm_outage_alerted"), "clear the outage alert");
}

void Monitor::WarnOnce(Tracked& t, const std::string& event, const std::string& error) {
  constexpr size_t kMaxWarningsPerJob = 32;
  if (t.warned.size() >= kMaxWarningsPerJob || !t.warned.insert(event + " " + error).second) return;
  log_.Warn(event, {{"job", std::to_string(t.record.job_id)}, {"error", error}});
}

Expected<triage::ScanFacts> Monitor::ScanEndOfJob(const Tracked& t) const {
  if (!scanner_) return Error{"log triage unavailable"};
  if (!t.user) return Error{"the job's user is not known yet"};
  auto file = OpenUserFile(t.record.log_path, {.user = t.user});
  if (!file) return file.error();
  return scanner_->ScanHeadAndTailBounded(file->fd.get(), static_cast<uint64_t>(file->st.st_size),
                                          kEndScanHead, kEndScanTail);
}

void Monitor::ScanEndingJobs(const std::vector<slurm::SlurmJob>& listed) {
  // The jobs RefreshJobs is about to end: ended in Slurm, or gone from it.
  std::set<uint32_t> seen;
  for (const slurm::SlurmJob& job : listed) {
    seen.insert(job.job_id);
    auto found = jobs_.find(job.job_id);
    if (found == jobs_.end() || found->second.ended || !slurm::IsTerminalState(job.state)) continue;
    Tracked& t = found->second;
    if (!t.user) {
      t.user = JobUser{job.uid, job.gid};
      t.progress->SetUser(*t.user);
    }
    t.end_facts = ScanEndOfJob(t);
  }
  for (auto& [id, t] : jobs_) {
    if (!t.ended && !seen.count(id)) t.end_facts = ScanEndOfJob(t);
  }
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

void Monitor::RecoverJobs(double now) {
  for (auto& [id, t] : jobs_) {
    if (!t.ended && t.open && t.user && !t.record.diag_dir.empty()) Recover(t, now);
  }
}

void Monitor::Recover(Tracked& t, double now) {
  const uint32_t job = t.record.job_id;
  if (!t.on_hang) {
    auto manifest = ReadDiagManifest(t.record.diag_dir, t.user, t.record.node_list);
    if (!manifest) return;  // asked again next cycle
    t.on_hang = manifest->on_hang;
  }
  if (*t.on_hang == OnHang::kNotify) return;
  auto taken = store_.RecoverySteps(t.open->id);
  auto held = store_.RecoveryHeld(job);
  auto requeues = store_.RecoveryRequeues(job);
  if (!taken || !held || !requeues) return;
  if (RecoveryFinished(*taken)) return;
  RecoveryInputs in;
  in.choice = *t.on_hang;
  in.incident_class = t.open->klass;
  in.alerted_at = t.open->opened_at;
  in.now = now;
  in.held = *held;
  in.slurm_reachable = stats_.slurm_reachable;
  in.last_checkpoint_at = t.progress->checkpoint_saved_at();
  if (t.open->hosts.size() == 1) in.culprit_node = t.open->hosts.front();
  in.taken = *taken;
  int this_incident = 0;
  for (const RecoveryStep& s : *taken) this_incident += s.step == kStepRequeue;
  in.requeues_before = *requeues - this_incident;
  const RecoveryAction action = NextRecoveryAction(in, config_.recovery);
  if (action.kind == RecoveryAction::Kind::kNone) return;

  RecoveryStep step{action.step, now, action.detail};
  Expected<void> done;
  if (!config_.recovery.dry_run) {
    const std::string reason = fmt::format("jobmon: {} (incident {})", t.open->klass, t.open->id);
    switch (action.kind) {
      case RecoveryAction::Kind::kSignal:
        done = source_.SignalJobSteps(job, action.signal);
        break;
      case RecoveryAction::Kind::kRequeue:
        done = source_.RequeueExcluding(job, action.node);
        break;
      case RecoveryAction::Kind::kCancel:
        done = source_.CancelJob(job, reason);
        break;
      case RecoveryAction::Kind::kDrain:
        done = source_.DrainNode(action.node, reason);
        break;
      default:
        break;
    }
  }
  if (!done) {
    step = {std::string(kStepFailed), now,
            fmt::format("{}: {}", action.detail, done.error().message)};
  }
  Check(store_.AddRecoveryStep(t.open->id, job, step), "record recovery step");
  ++stats_.recovery_steps[step.step];
  log_.Warn("recovery_step", {{"job", std::to_string(job)},
                              {"incident", std::to_string(t.open->id)},
                              {"step", step.step},
                              {"detail", step.detail}});
  alerts::Alert alert =
      BuildAlert({config_.cluster, t.tunnel_command}, t.record, *t.open, "firing", now, nullptr);
  alert.recovery_step = step.step;
  alert.recovery = step.detail;
  Notify(alert);
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

void Monitor::ForgetEndedJobs(double now) {
  // Ended jobs stay in memory (and `jobmon status`) for a while, then only
  // in the store.
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const auto& r = it->second.record;
    if (it->second.ended && r.ended_at && now - *r.ended_at > config_.ended_retention) {
      feed_->Forget(it->first);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

void Monitor::RecordCycle(std::chrono::steady_clock::time_point started) {
  stats_.jobs_tracked = jobs_.size();
  stats_.diag_jobs = 0;
  for (const auto& [id, t] : jobs_) {
    if (t.window) ++stats_.diag_jobs;
  }
  stats_.diagnoses_pending = followup_->pending();
  ++stats_.cycles;
  stats_.last_cycle_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void Monitor::PollLogs(double now) {
  for (auto& [id, t] : jobs_) {
    if (!t.ended) PollLog(t, now);
  }
}

void Monitor::PollLog(Tracked& t, double now) {
  if (!t.user) return;  // never read a job's log with more privilege than its user has
  if (t.log_polled_in == cycle_number_) return;  // read already this cycle
  t.log_polled_in = cycle_number_;
  if (auto polled = t.progress->Poll(now); !polled) {
    WarnOnce(t, "log_unreadable", polled.error().message);
  }
}

std::pair<double, double> Monitor::TrainingSpan(const Tracked& t, const ProgressState& state,
                                                double fallback_until) const {
  const double until = state.last_step_time.value_or(fallback_until);
  return {t.progress->first_step_time().value_or(until - config_.window_seconds), until};
}

void Monitor::PollJob(Tracked& t, double now) {
  // Without the job's user nothing of it can be read, so nothing can be judged.
  if (!t.user) return;
  PollLog(t, now);
  if (t.window) {
    if (auto tb = t.window->LatestOf(metric_names::kTbStep);
        tb && tb->t >= now - config_.stale_after) {
      t.progress->OnTensorBoardStep(static_cast<int64_t>(tb->value), tb->t);
    }
  }
  if (t.progress->heartbeat_seen_at() && !t.heartbeat_handled) OnHeartbeat(t, now);
  const ProgressState state = t.progress->Evaluate(now);
  std::optional<StallClassification> stall;
  if (state.phase == Phase::kStalled) stall = ClassifyStallOf(t, state, now);
  const IncidentDecision decision = DecideOnProgress(
      state, FactsOf(t.open), stall ? stall->klass : std::string(), config_.slowdown.factor);
  if (decision.closes()) Close(t, decision.close_reason, now);
  if (decision.opens() && EndLooksLikeStall(t, stall, now)) {
    WarnOnce(t, "stall_not_raised",
             "the job is ending in Slurm (COMPLETING), or it looks ended (every host gone, or "
             "its log's own end) while Slurm does not answer or has just come back: its end, "
             "not a hang, until Slurm says otherwise");
  } else if (decision.opens()) {
    Open(t,
         decision.klass == kSlowdownClass ? SlowdownIncident(state)
                                          : StallIncident(t, state, *stall, now),
         now);
  }
  SaveProgress(t, now);
}

bool Monitor::EndLooksLikeStall(Tracked& t, const std::optional<StallClassification>& stall,
                                double now) {
  // COMPLETING: the steps are over and the epilog runs (archiving takes a
  // while); the log and the exporters stop as in a hang.
  if (t.record.slurm_state.starts_with("COMPLETING")) return true;
  // While Slurm does not answer, a job that ended looks like the death of
  // every node (its epilog stopped every exporter); Slurm's answer decides
  // (NODE_FAIL, or an end). Some hosts alive and others gone stays a stall.
  const double recovery_grace = std::max(60.0, 3 * config_.slurm_poll_interval);
  if (!stall || !(outage_.unreachable() || outage_.Recovering(now, recovery_grace))) return false;
  if (t.window) {
    const StallEvidence now_seen = t.window->Evidence(now, 0, 0, config_.stale_after);
    if (!now_seen.hosts.empty() &&
        std::all_of(now_seen.hosts.begin(), now_seen.hosts.end(), [&](const HostEvidence& h) {
          return !h.exporter_up || h.seconds_since_seen > config_.stale_after;
        })) {
      return true;
    }
  }
  // Nor can Slurm run the job's epilog: the exporters stay up. The log's
  // own end (a launcher's summary, the last planned step) says it finished.
  auto report = TriageLog(t, "", now);
  return report && report->status == triage::JobStatus::kCompleted;
}

StallClassification Monitor::ClassifyStallOf(const Tracked& t, const ProgressState& state,
                                             double now) const {
  std::string stall =
      fmt::format("no step for {}s (threshold {}s: {}); last step {}", Seconds(state.idle_seconds),
                  Seconds(state.threshold_seconds), state.threshold_reason,
                  state.last_step ? std::to_string(*state.last_step) : "none");
  // Which progress was followed, and how sure that makes the verdict: a
  // pulse (the job's periodic output, no progress line) is weaker evidence.
  if (t.progress->profile() == triage::StepProfile::kPulse) {
    stall += "; lower confidence: no progress line, followed the job's periodic output (" +
             t.progress->progress_source() + ")";
  } else if (t.progress->profile() == triage::StepProfile::kLearned) {
    stall += "; followed the job's learned progress line (" + t.progress->progress_source() + ")";
  }
  StallClassification c;
  if (!state.last_step) {
    c.klass = "hang/startup";
    c.summary = "no training step within the startup grace: " + stall;
  } else if (const std::string stale = t.window ? feed_->Stale(t.record.job_id, now) : "";
             !stale.empty()) {
    c.klass = "hang";
    c.summary = "training stopped; no system evidence (" + stale + "): " + stall;
  } else if (t.window && !t.window->hosts().empty()) {
    const auto [from, until] = TrainingSpan(t, state, now);
    c = ClassifyStall(t.window->Evidence(now, from, until, config_.stale_after));
    c.summary += "; " + stall;
  } else {
    c.klass = "hang";
    c.summary = "training stopped; no system evidence (job without --diag): " + stall;
  }
  return c;
}

Monitor::NewIncident Monitor::StallIncident(Tracked& t, const ProgressState& state,
                                            const StallClassification& stall, double now) {
  NewIncident incident{stall.klass, stall.summary, stall.evidence, stall.hosts, std::nullopt};
  // Which rank stopped first, where ranks print their own steps; with the
  // exporters' task labels, on which node, and what each rank waits on.
  const triage::RankProgress& ranks = t.progress->ranks();
  std::vector<HostEvidence> hosts;
  if (ranks.ranks().size() > 1 && t.window && feed_->Stale(t.record.job_id, now).empty()) {
    hosts = t.window->Evidence(now, 0, 0, config_.stale_after).hosts;
  }
  const RankWaits waits = DescribeRankWaits(ranks, hosts);
  std::vector<std::string> rank_lines;
  if (!waits.stopped.empty()) {
    incident.summary += "; " + waits.stopped;
    rank_lines.push_back("ranks: " + waits.stopped);
    // Where the class names no host, the node of the rank that stopped
    // first is the one the incident is about (recovery excludes it).
    if (incident.hosts.empty()) incident.hosts = waits.stopped_hosts;
  } else if (ranks.folded()) {
    rank_lines.push_back("ranks: " + std::string(triage::RankProgress::kFoldedNote));
  } else if (ranks.ranks().size() > 1) {
    rank_lines.push_back(fmt::format("ranks: all {} ranks printing steps stopped at step {}",
                                     ranks.ranks().size(), ranks.ranks().begin()->second.step));
  }
  for (const std::string& wait : waits.waits) rank_lines.push_back("ranks: " + wait);
  // No rank named (only rank 0 prints, or all stopped at once): the hosts'
  // own evidence dates who left training first (divergence.h).
  if (waits.stopped.empty() && t.window && feed_->Stale(t.record.job_id, now).empty()) {
    const auto [from, until] = TrainingSpan(t, state, now);
    const std::string first =
        DescribeDivergence(FirstDivergence(*t.window, from, until, now, config_.stale_after),
                           t.window->hosts().size());
    if (!first.empty()) {
      incident.summary += "; " + first;
      rank_lines.push_back(first);
    }
  }
  incident.evidence.insert(incident.evidence.begin(), rank_lines.begin(), rank_lines.end());
  const auto& tail = t.progress->tail();
  size_t from = tail.size() > 5 ? tail.size() - 5 : 0;
  for (size_t i = from; i < tail.size(); ++i) incident.evidence.push_back("log tail: " + tail[i]);
  // The alert carries the triage of the log as it stands (a bounded read of
  // its head and tail), so whoever is paged sees the job's own lines.
  incident.report = TriageLog(t, t.record.slurm_state, now, &state);
  return incident;
}

Monitor::NewIncident Monitor::SlowdownIncident(const ProgressState& state) const {
  return {kSlowdownClass,
          fmt::format("steps take {:.2f}x as long as early in the run (median {:.3g}s over the "
                      "last {}s, {:.3g}s then): throughput degraded, the job is not hung",
                      *state.slowdown, *state.recent_interval,
                      Seconds(config_.slowdown.window_seconds), *state.baseline_interval),
          {fmt::format("recent median step {:.3f}s over {} steps in the last {}s",
                       *state.recent_interval, state.recent_steps,
                       Seconds(config_.slowdown.window_seconds)),
           fmt::format("baseline median step {:.3f}s over the first {} steady steps",
                       *state.baseline_interval, state.baseline_steps),
           fmt::format("last step {} at {:.0f}s ago", state.last_step.value_or(-1),
                       state.idle_seconds)},
          {},
          std::nullopt};
}

std::optional<triage::TriageReport> Monitor::TriageLog(Tracked& t, const std::string& slurm_state,
                                                       double now, const ProgressState* stall) {
  if (!scanner_) return std::nullopt;
  Expected<triage::ScanFacts> facts = Error{""};
  if (t.end_facts) {
    facts = std::move(*t.end_facts);
    t.end_facts.reset();
  } else {
    facts = ScanEndOfJob(t);
  }
  if (!facts) {
    log_.Warn("triage_failed",
              {{"job", std::to_string(t.record.job_id)}, {"error", facts.error().message}});
    return std::nullopt;
  }
  triage::JobContext job;
  job.log_path = t.record.log_path;
  job.job_id = std::to_string(t.record.job_id);
  job.analysis.wall_clock_now = now;
  job.analysis.stall_min_seconds = config_.stall.min_stall_seconds;
  job.analysis.stall_factor = config_.stall.k;
  if (stall) {  // the monitor's own verdict: its triage must not say "progressing"
    job.analysis.last_step_seen_at = stall->last_step_time;
    job.analysis.stall_threshold_seconds = stall->threshold_seconds;
  }
  if (!slurm_state.empty() && !slurm_state.ends_with("?")) {
    job.slurm_state = slurm_state;
    job.slurm_exit_code = triage::ParseSlurmExitCode(t.slurm_exit_code);
  }
  triage::TriageReport report = triage::TriageJob(*facts, job);
  // A command for admins to paste is never the user's text: the log's is
  // kept only when it is the one rebuilt from Slurm's head node and port.
  if (report.tunnel_command && *report.tunnel_command != t.tunnel_command) {
    report.tunnel_command.reset();
  }
  return report;
}

void Monitor::OnHeartbeat(Tracked& t, double now) {
  t.heartbeat_handled = true;
  const double accused_at = *t.progress->heartbeat_seen_at();
  HeartbeatInput in;
  in.accused_at = accused_at;
  in.timeout = t.progress->heartbeat_timeout().value_or(config_.heartbeat_timeout);
  auto report = TriageLog(t, t.record.slurm_state, now);
  if (report && report->heartbeat) {
    in.checklist = report->heartbeat;
    for (const auto& [task, host] : report->heartbeat->hosts) in.accused_hosts.push_back(host);
  }
  ProgressState state = t.progress->Evaluate(now);
  if (t.window && !t.window->hosts().empty() && feed_->Stale(t.record.job_id, now).empty()) {
    const auto [from, until] = TrainingSpan(t, state, accused_at);
    in.at_silence = t.window->Evidence(accused_at - in.timeout, from, until, config_.stale_after);
    in.at_accusation = t.window->Evidence(accused_at, from, until, config_.stale_after);
  }
  HeartbeatVerdict verdict = ClassifyHeartbeat(in);
  const IncidentDecision decision = DecideOnHeartbeat(FactsOf(t.open), verdict.klass);
  if (decision.opens()) {
    Open(t,
         {verdict.klass, verdict.summary, std::move(verdict.evidence), std::move(verdict.hosts),
          std::move(report)},
         now);
  }
}

void Monitor::OnEnded(Tracked& t, const std::string& slurm_state, double now) {
  PollLog(t, now);
  if (t.progress->heartbeat_seen_at() && !t.heartbeat_handled) OnHeartbeat(t, now);
  t.ended = true;
  t.record.ended_at = now;
  auto report = TriageLog(t, slurm_state, now);
  std::optional<EndVerdict> verdict;
  if (report) {
    t.record.final_class = report->primary;
    t.record.final_status = triage::ToString(report->status);
    verdict = EndVerdict{report->primary, report->status};
  }
  const IncidentDecision decision = DecideOnEnd(FactsOf(t.open), verdict, t.heartbeat_handled);
  // The incident the job ends with: the diagnosis follows it up.
  int64_t end_incident = t.open ? t.open->id : 0;
  if (decision.closes()) Close(t, decision.close_reason, now);
  Check(store_.UpsertJob(t.record), "upsert job");
  log_.Info("job_ended", {{"job", std::to_string(t.record.job_id)},
                          {"slurm_state", slurm_state},
                          {"triage_status", t.record.final_status},
                          {"triage_class", t.record.final_class}});
  // The triage classification at job end, unless an incident already named it.
  if (decision.opens()) {
    NewIncident incident{decision.klass, report->what_happened, {}, {}, std::nullopt};
    for (const auto& line : report->evidence) {
      incident.evidence.push_back(fmt::format("log line {}: {}", line.line, line.text));
    }
    incident.report = std::move(report);
    Open(t, std::move(incident), now);
    if (t.open) end_incident = t.open->id;
    if (decision.closed_at_once && t.open) {
      // Nothing to wait for: the job is over. Closed without a resolve.
      Check(store_.CloseIncident(t.open->id, now, "ended"), "close incident");
      t.open.reset();
    }
  }
  SaveProgress(t, now);
  QueueDiagnosis(t, end_incident, now);
}

void Monitor::Open(Tracked& t, NewIncident opened_as, double now) {
  IncidentRecord incident;
  incident.job_id = t.record.job_id;
  incident.klass = std::move(opened_as.klass);
  incident.state = "open";
  incident.opened_at = now;
  incident.summary = std::move(opened_as.summary);
  incident.evidence = std::move(opened_as.evidence);
  incident.hosts = std::move(opened_as.hosts);
  auto opened = store_.OpenIncident(incident);
  if (!opened) {
    log_.Error("state_store", {{"op", "open incident"}, {"error", opened.error().message}});
    return;
  }
  auto [id, created] = *opened;
  incident.id = id;
  if (!created) {
    // The store already had one open (a restart): that one stands.
    if (auto existing = store_.OpenIncidentOf(t.record.job_id); existing && *existing) {
      t.open = **existing;
    }
    return;
  }
  t.open = incident;
  ++stats_.incidents_opened[incident.klass];
  log_.Warn("incident_opened", {{"job", std::to_string(t.record.job_id)},
                                {"incident", std::to_string(id)},
                                {"class", incident.klass},
                                {"summary", incident.summary}});
  Send(t, incident, "firing", now, opened_as.report ? &*opened_as.report : nullptr);
}

void Monitor::Close(Tracked& t, const std::string& reason, double now) {
  if (!t.open) return;
  Check(store_.CloseIncident(t.open->id, now, reason), "close incident");
  IncidentRecord closed = *t.open;
  closed.state = "closed";
  closed.closed_at = now;
  closed.close_reason = reason;
  t.open.reset();
  log_.Info("incident_closed", {{"job", std::to_string(t.record.job_id)},
                                {"incident", std::to_string(closed.id)},
                                {"class", closed.klass},
                                {"reason", reason},
                                {"after_s", Seconds(now - closed.opened_at)}});
  Send(t, closed, "resolved", now, nullptr);
}

void Monitor::Send(const Tracked& t, const IncidentRecord& incident, const std::string& status,
                   double at, const triage::TriageReport* report) {
  alerts::Alert alert =
      BuildAlert({config_.cluster, t.tunnel_command}, t.record, incident, status, at, report);
  if (status == "firing") alert.chart_png = DrawChart(t, incident, alerts::Title(alert), at);
  Notify(alert);
}

std::string Monitor::DrawChart(const Tracked& t, const IncidentRecord& incident,
                               const std::string& title, double now) {
  if (config_.gnuplot.empty() || !t.progress) return "";
  const chart::Picture picture =
      IncidentPicture(title, t.progress->trail(), t.progress->Evaluate(now), t.window.get(),
                      incident.hosts, t.record.start_time.value_or(t.record.first_seen), now);
  // Bounded by its deadline: a firing is rare, and its alert waits for it.
  chart::ChartOptions options;
  options.gnuplot = config_.gnuplot;
  options.timeout = std::chrono::milliseconds(5000);
  auto png = chart::RenderPng(picture, options);
  if (!png) {
    ++stats_.chart_failures;
    log_.Warn("chart_failed", {{"job", std::to_string(t.record.job_id)},
                               {"incident", std::to_string(incident.id)},
                               {"error", png.error().message}});
    return "";
  }
  Check(store_.SaveIncidentChart(incident.id, *png), "save incident chart");
  return std::move(*png);
}

void Monitor::Notify(const alerts::Alert& alert) {
  if (auto sent = notifier_.Notify(alert); !sent) {
    ++stats_.notify_failures;
    log_.Error(
        "notify_failed",
        {{"notifier", notifier_.name()}, {"key", alert.key}, {"error", sent.error().message}});
  }
}

void Monitor::SaveBaselines(double now) {
  constexpr double kSaveInterval = 60;
  constexpr double kRetryWithoutPower = 5;
  for (auto& [id, t] : jobs_) {
    if (!t.window) continue;
    if (t.ended) {
      // Ended this cycle (OnEnded, this transaction): nothing left to judge.
      if (t.record.ended_at == now) {
        Check(store_.DeleteHostBaselines(id), "delete host baselines");
        baselines_due_at_.erase(id);
      }
      continue;
    }
    if (!t.user) continue;
    if (auto due = baselines_due_at_.find(id);
        due != baselines_due_at_.end() && now < due->second) {
      continue;
    }
    const ProgressState state = t.progress->Evaluate(now);
    if (state.phase != Phase::kTraining || !state.last_step_time) continue;
    const auto [from, until] = TrainingSpan(t, state, now);
    const auto baselines = t.window->Baselines(now, from, until, config_.stale_after);
    // Saved as soon as a host has its training power baseline (a hang can
    // come seconds into training), then once a minute; until then, every few
    // seconds (a job whose GPUs report no power never gets one).
    const bool has_power = std::any_of(baselines.begin(), baselines.end(),
                                       [](const auto& b) { return b.second.power.has_value(); });
    if (!baselines.empty()) {
      Check(store_.SaveHostBaselines(id, baselines, now), "save host baselines");
    }
    baselines_due_at_[id] = now + (has_power ? kSaveInterval : kRetryWithoutPower);
  }
}

void Monitor::SaveProgress(Tracked& t, double now) {
  ProgressRecord p = t.progress->Snapshot(now);
  if (p.log_offset == t.saved.log_offset && p.log_inode == t.saved.log_inode &&
      p.phase == t.saved.phase && p.last_step == t.saved.last_step &&
      now - t.saved.updated_at < 60) {
    return;
  }
  Check(store_.SaveProgress(p), "save progress");
  t.saved = p;
}

}  // namespace jobmon::monitor
