// Scrape mode: every followed job's exporters, scraped by the monitor each
// cycle. The targets come from the job's diag dir (written by each node's
// prolog, as the job's user) and are checked against Slurm's node
// addresses and the cluster's CIDRs before one is connected to
// (diag_files.h CheckTargets).

#include <map>
#include <string>
#include <vector>

#include "evidence/evidence_feed.h"
#include "jobmon/common/private_ip.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/exposition.h"
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
    for (const FeedJob& job : jobs) {
      PerJob& state = jobs_[job.record.job_id];
      // The targets dir fills as the nodes' prologs run: re-read it for a while.
      if (state.targets.empty() || now - state.targets_read_at > kRereadTargets) {
        RefreshNodeAddresses(now);
        ReadDiagFiles(job, state, now);
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

  struct PerJob {
    std::vector<ScrapeTarget> targets;  // validated (CheckTargets)
    double targets_read_at = -1e18;
  };

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
