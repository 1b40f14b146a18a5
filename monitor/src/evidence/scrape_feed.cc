// Scrape mode: every followed job's exporters, scraped by the monitor,
// every cycle while a verdict may soon read the job's window and once a
// healthy interval otherwise (scrape_cadence.h). The targets come from the
// job's diag dir (written by each node's prolog, as the job's user) and are
// checked against Slurm's node addresses and the cluster's CIDRs before one
// is connected to (diag_files.h CheckTargets). A job's window is filled
// from its own Prometheus, through the head node's exporter
// (history_backfill.h), when it trained before the daemon watched it (a
// restart, a daemon started late) without a stored baseline, and when it
// turns from sparse scrapes to every cycle (what the sparse ones missed).

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "evidence/evidence_feed.h"
#include "jobmon/common/hostlist.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/history_backfill.h"
#include "jobmon/monitor/scrape.h"
#include "jobmon/monitor/scrape_cadence.h"

namespace jobmon::monitor {
namespace {

class ScrapeFeed : public EvidenceFeed {
 public:
  explicit ScrapeFeed(FeedContext context) : context_(std::move(context)) {}

  // The logs first: the cadence follows what they say now.
  bool NeedsProgressFirst() const override { return true; }

  double SampleGap() const override { return context_.config.healthy_scrape_interval; }

  void Gather(const std::vector<FeedJob>& jobs, double now) override {
    std::vector<ScrapeTarget> targets;
    std::vector<std::pair<MetricWindow*, MetricWindow::Keep>> windows;
    const auto started = std::chrono::steady_clock::now();
    size_t backfills = 0;
    if (!watching_since_) watching_since_ = now;
    for (const FeedJob& job : jobs) {
      PerJob& state = jobs_[job.record.job_id];
      // The targets dir fills as the nodes' prologs run: re-read it each
      // minute until every node has a target, then seldom (an exporter
      // restarted on another port).
      if (state.targets.empty() ||
          now - state.targets_read_at >
              (state.targets_complete ? kRereadCompleteTargets : kRereadTargets)) {
        RefreshNodeAddresses(now);
        ReadDiagFiles(job, state, now);
      }
      ScrapeCadence cadence = CadenceOf(
          job.progress.Evaluate(now), {job.heartbeat_pending, job.incident_open, job.power_baseline,
                                       job.progress.TakesTensorBoardSteps() &&
                                           job.window.LatestOf(metric_names::kTbStep).has_value()});
      // A healthy interval of 0: every job every cycle, in full, as ever.
      if (context_.config.healthy_scrape_interval <= 0) cadence = {true, true, "always"};
      // Turned: what the window lacks (the families a baseline does not
      // need, the samples between sparse scrapes) from the job's Prometheus;
      // turned back, the window keeps the baseline's families only.
      if (cadence.full && !state.full && state.scraped_at) state.refill_for = cadence.why;
      if (!cadence.full && state.full) job.window.KeepBaselineSeriesOnly();
      state.full = cadence.full;
      // Before this cycle's scrape, which the history must not come after;
      // a few a cycle, so a restart among thousands of jobs spreads them.
      if ((BackfillDue(job, state, now) || state.refill_for) && backfills < kBackfillsPerCycle &&
          std::chrono::steady_clock::now() - started < kBackfillTimePerCycle) {
        backfills += Backfill(job, state, now) ? 1 : 0;
      }
      if (!ScrapeDue(cadence.every_cycle, state.scraped_at, context_.config.healthy_scrape_interval,
                     now, HealthyPhase(job.record.job_id))) {
        continue;
      }
      if (!state.targets.empty()) state.scraped_at = now;
      for (const ScrapeTarget& target : state.targets) {
        targets.push_back(target);
        windows.push_back(
            {&job.window, cadence.full ? MetricWindow::Keep::kAll : MetricWindow::Keep::kBaseline});
      }
    }
    if (targets.empty()) return;
    const MonitorConfig& config = context_.config;
    std::vector<ScrapeResult> results = ScrapeAll(targets, config.scrape_timeout, kMaxScrapeBody,
                                                  static_cast<size_t>(config.scrape_concurrency));
    for (size_t i = 0; i < results.size(); ++i) {
      ++context_.stats.scrapes;
      auto [window, keep] = windows[i];
      if (results[i].ok) {
        window->AddScrape(targets[i].host, now,
                          ParseExposition(results[i].body, WindowInputNames()), keep);
      } else {
        ++context_.stats.scrape_failures;
        window->AddFailedScrape(targets[i].host, now);
      }
    }
  }

  // A job a verdict reads is scraped every cycle (scrape_cadence.h), and a
  // scrape answers or fails: the window is never older than it.
  std::string Stale(uint32_t, double) const override { return ""; }

  void Forget(uint32_t job_id) override { jobs_.erase(job_id); }

 private:
  static constexpr double kRereadTargets = 60, kRereadCompleteTargets = 600;
  // A job that started this recently has no history worth asking for.
  static constexpr double kBackfillAfterRunning = 30;
  static constexpr size_t kBackfillsPerCycle = 8, kBackfillTries = 3;
  static constexpr double kBackfillRetry = 60;
  static constexpr std::chrono::seconds kBackfillTimePerCycle{2};

  struct PerJob {
    std::vector<ScrapeTarget> targets;  // validated (CheckTargets)
    double targets_read_at = -1e18;
    bool targets_complete = false;  // a target for every node of the job
    // Back-filled, given up, or not needed (a baseline was restored).
    bool backfill_done = false;
    size_t backfill_tries = 0;
    double backfill_next_at = 0;
    std::optional<double> scraped_at;  // its exporters' last scrape
    bool full = false;                 // every series kept at the last cycle (ScrapeCadence)
    // Why its window is to be refilled from its Prometheus (the
    // ScrapeCadence's why), once; nullptr: no refill due.
    const char* refill_for = nullptr;
  };

  // Only a job that started before this daemon watched has a past the
  // daemon missed, and one that ran only moments has none worth asking for.
  bool BackfillDue(const FeedJob& job, const PerJob& state, double now) const {
    return !state.backfill_done && now >= state.backfill_next_at && job.record.start_time &&
           *job.record.start_time < *watching_since_ &&
           now - *job.record.start_time >= kBackfillAfterRunning;
  }

  // Back-fills the job's window from its head node's exporter; false when
  // nothing was asked (no head target yet, or no need).
  bool Backfill(const FeedJob& job, PerJob& state, double now) {
    // A refill is tried once: on failure the window's own scrapes and this
    // cycle's stay. Without a power baseline those are too few to keep (a
    // restart's, or a job late while still learning it): the history
    // replaces them, as a restart's back-fill does.
    const bool restart = BackfillDue(job, state, now) || !job.power_baseline;
    const char* refill_for = std::exchange(state.refill_for, nullptr);
    if (!refill_for && job.window.HasRestoredPower()) {
      state.backfill_done = true;
      return false;
    }
    // No target yet: the targets dir is read again next cycle.
    if (state.targets.empty()) return false;
    // The head node is the first of Slurm's node list: the one with the
    // job's Prometheus (the prolog starts it there).
    auto nodes = ExpandHostlist(job.record.node_list);
    const ScrapeTarget* head = nullptr;
    for (const ScrapeTarget& target : state.targets) {
      if (nodes && !nodes->empty() && target.host == nodes->front()) head = &target;
    }
    if (head == nullptr) {
      // Its target may not be published yet: look again when they are re-read.
      state.backfill_next_at = state.targets_read_at + kRereadTargets;
      return false;
    }
    const std::set<std::string> hosts(nodes->begin(), nodes->end());
    const MonitorConfig& config = context_.config;
    const double from = std::max(now - config.window_seconds, job.record.start_time.value_or(0));
    auto history = FetchJobHistory(head->address, job.record.job_id, hosts, from, now,
                                   std::max(2.0, config.scrape_timeout));
    if (!history) {
      if (restart) {
        state.backfill_done = ++state.backfill_tries == kBackfillTries;
        state.backfill_next_at = now + kBackfillRetry;
      }
      context_.warn_once(job.record.job_id, "history_unavailable", history.error().message);
      return true;
    }
    state.backfill_done = true;
    // A restart's back-fill fills an empty window; a turned job with a
    // baseline keeps its own scrapes (finer than the history's steps) and
    // gains what it lacks.
    const size_t fed =
        FeedStoreAnswer(job.window, *history, from - 1,
                        restart ? MetricWindow::Keep::kAll : MetricWindow::Keep::kLacking);
    context_.log.Info("history_backfilled", {{"job", std::to_string(job.record.job_id)},
                                             {"hosts", std::to_string(history->size())},
                                             {"scrapes", std::to_string(fed)},
                                             {"from", head->host},
                                             {"why", refill_for ? refill_for : "restart"}});
    return true;
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
    const auto nodes = ExpandHostlist(job.record.node_list);
    state.targets_complete =
        nodes && !nodes->empty() &&
        std::all_of(nodes->begin(), nodes->end(), [&](const std::string& node) {
          return std::any_of(state.targets.begin(), state.targets.end(),
                             [&](const ScrapeTarget& target) { return target.host == node; });
        });
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
  std::optional<double> watching_since_;  // this feed's first cycle
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
