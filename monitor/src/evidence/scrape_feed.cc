// Scrape mode: every followed job's exporters, scraped by the monitor each
// cycle. The targets come from the job's diag dir (written by each node's
// prolog, as the job's user) and are checked against Slurm's node
// addresses and the cluster's CIDRs before one is connected to
// (diag_files.h CheckTargets). A job that trained before the daemon
// watched it (a restart, a daemon started late) without a stored baseline
// has its window back-filled once from its own Prometheus, through the head
// node's exporter (history_backfill.h).

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "evidence/evidence_feed.h"
#include "jobmon/common/hostlist.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/history_backfill.h"
#include "jobmon/monitor/scrape.h"

namespace jobmon::monitor {
namespace {

class ScrapeFeed : public EvidenceFeed {
 public:
  explicit ScrapeFeed(FeedContext context) : context_(std::move(context)) {}

  bool NeedsProgressFirst() const override { return false; }

  void Gather(const std::vector<FeedJob>& jobs, double now) override {
    std::vector<ScrapeTarget> targets;
    std::vector<MetricWindow*> windows;
    const auto started = std::chrono::steady_clock::now();
    size_t backfills = 0;
    for (const FeedJob& job : jobs) {
      PerJob& state = jobs_[job.record.job_id];
      // The targets dir fills as the nodes' prologs run: re-read it for a while.
      if (state.targets.empty() || now - state.targets_read_at > kRereadTargets) {
        RefreshNodeAddresses(now);
        ReadDiagFiles(job, state, now);
      }
      // Before this cycle's scrape, which the history must not come after;
      // a few a cycle, so a restart among thousands of jobs spreads them.
      if (backfills < kBackfillsPerCycle &&
          std::chrono::steady_clock::now() - started < kBackfillTimePerCycle &&
          WantsBackfill(job, state, now)) {
        ++backfills;
        Backfill(job, state, now);
      }
      for (const ScrapeTarget& target : state.targets) {
        targets.push_back(target);
        windows.push_back(&job.window);
      }
    }
    if (targets.empty()) return;
    const MonitorConfig& config = context_.config;
    std::vector<ScrapeResult> results = ScrapeAll(targets, config.scrape_timeout, kMaxScrapeBody,
                                                  static_cast<size_t>(config.scrape_concurrency));
    for (size_t i = 0; i < results.size(); ++i) {
      ++context_.stats.scrapes;
      if (results[i].ok) {
        windows[i]->AddScrape(targets[i].host, now, ParseExposition(results[i].body));
      } else {
        ++context_.stats.scrape_failures;
        windows[i]->AddFailedScrape(targets[i].host, now);
      }
    }
  }

  // A scrape answers or fails this cycle: the window is never older than it.
  std::string Stale(uint32_t, double) const override { return ""; }

  void Forget(uint32_t job_id) override { jobs_.erase(job_id); }

 private:
  static constexpr double kRereadTargets = 60;
  // A job that started this recently has no history worth asking for.
  static constexpr double kBackfillAfterRunning = 30;
  static constexpr size_t kBackfillsPerCycle = 8, kBackfillTries = 3;
  static constexpr double kBackfillRetry = 60;
  static constexpr std::chrono::seconds kBackfillTimePerCycle{2};

  struct PerJob {
    std::vector<ScrapeTarget> targets;  // validated (CheckTargets)
    double targets_read_at = -1e18;
    size_t backfill_tries = 0;  // 0: not asked yet; kBackfillTries: done or given up
    double backfill_next_at = 0;
  };

  // A job that ran before this daemon saw it, with no stored baseline to
  // judge a stall by, and whose head node's exporter is a target.
  bool WantsBackfill(const FeedJob& job, const PerJob& state, double now) const {
    if (state.backfill_tries >= kBackfillTries || now < state.backfill_next_at) return false;
    if (!job.record.start_time || now - *job.record.start_time < kBackfillAfterRunning) {
      return false;
    }
    return !job.window.HasRestoredPower() && HeadTarget(job, state) != nullptr;
  }

  // The head node is the first of Slurm's node list: the one with the
  // job's Prometheus (the prolog starts it there).
  static const ScrapeTarget* HeadTarget(const FeedJob& job, const PerJob& state) {
    auto nodes = ExpandHostlist(job.record.node_list);
    if (!nodes || nodes->empty()) return nullptr;
    for (const ScrapeTarget& target : state.targets) {
      if (target.host == nodes->front()) return &target;
    }
    return nullptr;
  }

  void Backfill(const FeedJob& job, PerJob& state, double now) {
    ++state.backfill_tries;
    const ScrapeTarget* head = HeadTarget(job, state);
    auto nodes = ExpandHostlist(job.record.node_list);
    const std::set<std::string> hosts(nodes->begin(), nodes->end());
    const MonitorConfig& config = context_.config;
    const double from = std::max(now - config.window_seconds, *job.record.start_time);
    auto history = FetchJobHistory(head->address, job.record.job_id, hosts, from, now,
                                   std::max(2.0, config.scrape_timeout));
    if (!history) {
      state.backfill_next_at = now + kBackfillRetry;
      context_.warn_once(job.record.job_id, "history_unavailable", history.error().message);
      return;
    }
    state.backfill_tries = kBackfillTries;
    const size_t fed = FeedStoreAnswer(job.window, *history, from - 1);
    context_.log.Info("history_backfilled", {{"job", std::to_string(job.record.job_id)},
                                             {"hosts", std::to_string(history->size())},
                                             {"scrapes", std::to_string(fed)},
                                             {"from", head->host}});
  }

  void ReadDiagFiles(const FeedJob& job, PerJob& state, double now) {
    state.targets_read_at = now;
    ReadTunnelCommand(context_, job);
    DiagTargets read = ReadDiagTargets(job.record.diag_dir, job.user);
    for (const std::string& problem : read.problems) {
      context_.warn_once(job.record.job_id, "diag_file_refused", problem);
    }
    CheckedTargets checked = CheckTargets(
        read.targets, MakeTargetPolicy(context_.config.cluster_cidrs, job.record.node_list,
                                       node_addresses_, own_addresses_));
    if (!checked.dropped.empty()) {
      std::string reasons;
      for (const std::string& d : checked.dropped) reasons += (reasons.empty() ? "" : "; ") + d;
      context_.warn_once(job.record.job_id, "targets_dropped", reasons);
    }
    state.targets = std::move(checked.kept);
  }

  // Slurm's node addresses and this host's own, asked again once a minute
  // (after a failure: at the Slurm poll interval) while targets are read.
  void RefreshNodeAddresses(double now) {
    if (next_node_poll_ && now < *next_node_poll_) return;
    auto known = context_.source.ListNodeAddresses();
    if (known) {
      node_addresses_ = std::move(*known);
      if (!node_addresses_error_.empty() && next_node_poll_) {
        context_.log.Info("slurm_nodes_known_again");
      }
      node_addresses_error_.clear();
      next_node_poll_ = now + 60;
    } else {
      // The last known addresses stay; with none, every target is refused.
      if (node_addresses_error_ != known.error().message) {
        context_.log.Warn(
            "slurm_nodes_unknown",
            {{"error", known.error().message},
             {"action", node_addresses_.empty() ? "no exporter target is scraped"
                                                : "keeping the last known node addresses"}});
      }
      node_addresses_error_ = known.error().message;
      next_node_poll_ = now + context_.config.slurm_poll_interval;
    }
    if (auto interfaces = ListInterfaceAddresses()) {
      own_addresses_.clear();
      for (const InterfaceAddress& i : *interfaces) own_addresses_.push_back(i.address);
    }
  }

  FeedContext context_;
  std::map<uint32_t, PerJob> jobs_;
  NodeAddresses node_addresses_;
  std::vector<IpAddress> own_addresses_;
  std::string node_addresses_error_ = "not asked yet";
  std::optional<double> next_node_poll_;
};

}  // namespace

std::unique_ptr<EvidenceFeed> MakeScrapeFeed(FeedContext context) {
  return std::make_unique<ScrapeFeed>(std::move(context));
}

}  // namespace jobmon::monitor
