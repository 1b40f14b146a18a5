#pragma once
// Where a --diag job's system evidence comes from, behind one interface: its
// exporters scraped (scrape_feed.cc) or the central store asked
// (store_feed.cc, docs/monitor.md "Central store"). Each feed keeps its own
// per-job state; the core loop (loop/monitor.cc) hands it the followed jobs once
// a cycle and asks whether a job's window may be judged, never which feed
// it is.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jobmon/common/user_file.h"
#include "jobmon/monitor/event_log.h"
#include "jobmon/monitor/job_progress.h"
#include "jobmon/monitor/job_source.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/monitor_config.h"
#include "jobmon/monitor/monitor_stats.h"
#include "jobmon/monitor/state_store.h"

namespace jobmon::monitor {

// A followed --diag job (its user known, not ended), for one cycle.
struct FeedJob {
  const JobRecord& record;
  const JobUser& user;
  JobProgress& progress;  // store mode feeds it the TensorBoard step
  MetricWindow& window;
  bool heartbeat_pending;       // an accusation not judged yet needs its evidence
  bool incident_open;           // a verdict stands: its evidence is watched
  bool power_baseline;          // the window has a training power baseline (saved or restored)
  std::string& tunnel_command;  // rebuilt from the job's manifest, which the feed reads
};

// What a feed may use of the daemon.
struct FeedContext {
  const MonitorConfig& config;  // the monitor's own: current after Reconfigure
  JobSource& source;            // Slurm's node addresses, for the targets' checks
  EventLog& log;
  MonitorStats& stats;
  // A per-job warning logged the first time only.
  std::function<void(uint32_t job_id, const std::string& event, const std::string& error)>
      warn_once;
};

class EvidenceFeed {
 public:
  virtual ~EvidenceFeed() = default;
  // True when the cycle must read the logs before Gather: the store is
  // asked only for the jobs whose progress needs a verdict now.
  virtual bool NeedsProgressFirst() const = 0;
  // This cycle's evidence into the jobs' windows. Called once every cycle.
  virtual void Gather(const std::vector<FeedJob>& jobs, double now) = 0;
  // Why the job's window must not be judged now (it would show every host
  // gone), as a phrase for the incident's summary; "" when it may be.
  virtual std::string Stale(uint32_t job_id, double now) const = 0;
  // The longest a training job's window goes without a sample by design
  // (scrape mode's healthy interval): evidence from before the job turned
  // allows for it before calling a host gone.
  virtual double SampleGap() const = 0;
  // The job is no longer followed: its state goes.
  virtual void Forget(uint32_t job_id) = 0;
};

// The feed [monitor] evidence names ("scrape" or "store").
std::unique_ptr<EvidenceFeed> MakeEvidenceFeed(FeedContext context);
std::unique_ptr<EvidenceFeed> MakeScrapeFeed(FeedContext context);
std::unique_ptr<EvidenceFeed> MakeStoreFeed(FeedContext context);

// Both feeds: the job's manifest, read as its user, into its tunnel
// command; a refused file warned once, a missing one (not written yet) not.
void ReadTunnelCommand(const FeedContext& context, const FeedJob& job);

}  // namespace jobmon::monitor
