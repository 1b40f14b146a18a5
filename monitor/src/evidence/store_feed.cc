// Store mode ([monitor] evidence = "store"): each cycle, the TensorBoard
// step of every followed job whose log has no step lines, and the same
// window as scrape mode's, fed from the central store's raw samples, for
// the jobs a verdict needs it for (NeedsStoreEvidence): a job new to it
// back-filled over the whole window, then the samples since its last answer
// (store_query.h).

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence_feed.h"
#include "jobmon/common/hostlist.h"
#include "jobmon/monitor/store_client.h"
#include "jobmon/monitor/store_query.h"

namespace jobmon::monitor {
namespace {

class StoreFeed : public EvidenceFeed {
 public:
  explicit StoreFeed(FeedContext context) : context_(std::move(context)) {}

  // The logs first: the store is asked for the evidence of the jobs that
  // stalled or were accused by what the logs say now.
  bool NeedsProgressFirst() const override { return true; }

  void Gather(const std::vector<FeedJob>& jobs, double now) override {
    ++cycle_;
    // Jobs at a time: a steady query carries a few samples per series, a
    // back-fill the whole window's.
    constexpr size_t kJobsPerQuery = 500, kBackfillJobsPerQuery = 50;
    std::vector<Followed> followed;
    for (const FeedJob& job : jobs) {
      PerJob& state = jobs_[job.record.job_id];
      if (job.tunnel_command.empty() && now - state.manifest_read_at > kRereadManifest) {
        state.manifest_read_at = now;
        ReadTunnelCommand(context_, job);
      }
      followed.push_back({&job, &state});
    }
    // A job whose log has step lines takes no TensorBoard step: asking for
    // them was half the store's queries at 10,000 jobs (monitor_bench.py).
    std::vector<Followed> tensorboard;
    for (const Followed& f : followed) {
      if (f.job->progress.TakesTensorBoardSteps()) tensorboard.push_back(f);
    }
    FetchTensorBoardSteps(tensorboard, kJobsPerQuery, now);
    // The evidence only of the jobs a verdict is about to read it for.
    std::vector<Followed> backfill, steady;
    double oldest = now;
    for (const Followed& f : followed) {
      if (!NeedsStoreEvidence(f.job->progress.Evaluate(now), f.job->heartbeat_pending)) continue;
      // A window answered last cycle goes on from that answer; any other (a
      // first stall, one after the job moved on, a failed query) is filled afresh.
      if (f.state->fetched_at && f.state->answered_in + 1 == cycle_) {
        steady.push_back(f);
        oldest = std::min(oldest, *f.state->fetched_at);
      } else {
        backfill.push_back(f);
      }
    }
    const MonitorConfig& config = context_.config;
    FetchEvidence(backfill, config.window_seconds, kBackfillJobsPerQuery, true, now);
    // Since the last answer, and a margin more: samples reach the store late
    // (Prometheus's remote_write sends a batch within 5 s, VictoriaMetrics
    // serves it about 1 s later), and a host's samples older than what it was
    // fed are skipped. Not the whole stale_after (30 s): every second of
    // margin is parsed again each cycle.
    constexpr double kLateSampleMargin = 15;
    const double range = std::min(config.window_seconds,
                                  now - oldest + std::min(config.stale_after, kLateSampleMargin));
    FetchEvidence(steady, range, kJobsPerQuery, false, now);
  }

  // The store has every sample the jobs' Prometheus scraped.
  double SampleGap() const override { return 0; }

  // No evidence answer for the job within stale_after: its hosts would all
  // look gone.
  std::string Stale(uint32_t job_id, double now) const override {
    auto found = jobs_.find(job_id);
    const std::optional<double> fetched =
        found == jobs_.end() ? std::nullopt : found->second.fetched_at;
    if (fetched && now - *fetched <= context_.config.stale_after) return "";
    // Since the job's last evidence answer, else the store's last answer of any query.
    const std::optional<double> answered = fetched ? fetched : store_ok_at_;
    return "the central store has not answered" +
           (answered ? fmt::format(" for {:.1f}s", now - *answered) : std::string());
  }

  void Forget(uint32_t job_id) override { jobs_.erase(job_id); }

 private:
  static constexpr double kRereadManifest = 60;

  struct PerJob {
    double manifest_read_at = -1e18;
    // When the store last answered the job's evidence (unset: never asked;
    // it is asked only while a verdict needs it), and in which Gather.
    std::optional<double> fetched_at;
    uint64_t answered_in = 0;
    // Slurm's user and nodes for the job, which its series in the store
    // must carry; rebuilt when Slurm's NodeList changes (not expanded again
    // on every cycle's query).
    StoreJobScope scope;
    std::string scope_nodes;
  };
  struct Followed {
    const FeedJob* job;
    PerJob* state;
  };

  static const StoreJobScope& ScopeOf(const Followed& f) {
    const JobRecord& record = f.job->record;
    PerJob& state = *f.state;
    if (state.scope.user != record.user || state.scope_nodes != record.node_list) {
      state.scope = {record.user, {}};
      if (auto nodes = ExpandHostlist(record.node_list))
        state.scope.hosts.insert(nodes->begin(), nodes->end());
      state.scope_nodes = record.node_list;
    }
    return state.scope;
  }

  void FetchTensorBoardSteps(const std::vector<Followed>& jobs, size_t per_query, double now) {
    // Over stale_after only: an older step does not count as progress.
    const double range = context_.config.stale_after;
    AskInBatches(jobs, per_query, range, StoreFamilies::kTensorBoardStep, now,
                 [&](const Followed& f, const StoreScrapes::mapped_type* hosts) {
                   if (!hosts) return;
                   if (auto tb = NewestTensorBoardStep(*hosts, now - range)) {
                     f.job->progress.OnTensorBoardStep(static_cast<int64_t>(tb->value), tb->t);
                   }
                 });
  }

  void FetchEvidence(const std::vector<Followed>& jobs, double range_seconds, size_t per_query,
                     bool backfill, double now) {
    AskInBatches(jobs, per_query, range_seconds, StoreFamilies::kEvidence, now,
                 [&](const Followed& f, const StoreScrapes::mapped_type* hosts) {
                   // The span the answer covers: the window holds nothing newer than
                   // what this answer has (late samples of a scrape fed before count).
                   const size_t fed =
                       hosts ? FeedStoreAnswer(f.job->window, *hosts, now - range_seconds) : 0;
                   f.state->fetched_at = now;
                   f.state->answered_in = cycle_;
                   if (backfill) {
                     context_.log.Info("store_backfill",
                                       {{"job", std::to_string(f.job->record.job_id)},
                                        {"hosts", std::to_string(hosts ? hosts->size() : 0)},
                                        {"scrapes", std::to_string(fed)},
                                        {"window_s", fmt::format("{:.1f}", range_seconds)}});
                   }
                 });
  }

  // The jobs `per_query` at a time, one query each; `answered` gets every
  // job of a batch the store answered, with its hosts' scrapes (nullptr:
  // none in the answer). A failed batch is skipped (Ask warned).
  void AskInBatches(
      const std::vector<Followed>& jobs, size_t per_query, double range_seconds,
      StoreFamilies families, double now,
      const std::function<void(const Followed&, const StoreScrapes::mapped_type*)>& answered) {
    for (size_t from = 0; from < jobs.size(); from += per_query) {
      const size_t to = std::min(jobs.size(), from + per_query);
      StoreScopes scopes;
      for (size_t i = from; i < to; ++i) scopes[jobs[i].job->record.job_id] = ScopeOf(jobs[i]);
      auto answer = Ask(scopes, range_seconds, families, now);
      if (!answer) continue;
      for (size_t i = from; i < to; ++i) {
        auto found = answer->find(jobs[i].job->record.job_id);
        answered(jobs[i], found == answer->end() ? nullptr : &found->second);
      }
    }
  }

  // One query for the jobs of `scopes` (each with the Slurm user and nodes
  // its series must carry); a failure counted and warned once (until the
  // store answers again).
  std::optional<StoreScrapes> Ask(const StoreScopes& scopes, double range_seconds,
                                  StoreFamilies families, double now) {
    const MonitorConfig& config = context_.config;
    const StoreAccess access{config.store_url,        config.StoreCluster(),
                             config.store_timeout,    config.store_bearer_token,
                             config.store_basic_user, config.store_basic_password};
    ++context_.stats.store_queries;
    auto answer = FetchStoreScrapes(access, scopes, range_seconds, now, families);
    if (!answer) {
      ++context_.stats.store_failures;
      if (store_error_ != answer.error().message) {
        context_.log.Warn("store_unreachable",
                          {{"error", answer.error().message},
                           {"action",
                            "no system evidence until it answers; stalls meanwhile are raised "
                            "as 'hang' without evidence, never judged from a stale window"}});
      }
      store_error_ = answer.error().message;
      return std::nullopt;
    }
    if (!store_error_.empty()) context_.log.Info("store_reachable_again");
    store_error_.clear();
    store_ok_at_ = now;
    return std::move(*answer);
  }

  FeedContext context_;
  std::map<uint32_t, PerJob> jobs_;
  uint64_t cycle_ = 0;
  std::optional<double> store_ok_at_;  // the store's last answer to any query
  std::string store_error_;            // its last error, warned once
};

}  // namespace

std::unique_ptr<EvidenceFeed> MakeStoreFeed(FeedContext context) {
  return std::make_unique<StoreFeed>(std::move(context));
}

}  // namespace jobmon::monitor
