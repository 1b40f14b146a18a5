// The jobs the Monitor follows: restored, fetched from Slurm, tracked, kept to Slurm's view,
// forgotten; Slurm's outages noted and announced.
#include <fmt/format.h>

#include <cstdlib>
#include <thread>

#include "evidence/evidence_feed.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/monitor.h"

namespace jobmon::monitor {
namespace {

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

}  // namespace

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
  if (!SlurmAnswerHolds(now, listed)) return;

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
    UpdateFromSlurm(found->second, job, now);
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

bool Monitor::SlurmAnswerHolds(double now, const Expected<std::vector<slurm::SlurmJob>>& listed) {
  if (!listed) {
    // A controller that does not answer says nothing about the jobs: keep
    // following them as they were, raise nothing, warn.
    ++stats_.slurm_failures;
    outage_.Failed(now, listed.error().message);
    NoteSlurmOutage(now);
    return false;
  }
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
    return false;
  }
  NoteSlurmAnswered(now);
  return true;
}

void Monitor::UpdateFromSlurm(Tracked& t, const slurm::SlurmJob& job, double now) {
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

}  // namespace jobmon::monitor
