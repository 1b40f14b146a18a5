#pragma once
// Scrape mode's cadence (docs/monitor.md "Scraping by need"): a job's
// exporters are scraped every cycle, every series kept, only while a
// verdict may soon read its window; a job training on pace is scraped once
// a healthy interval and keeps only what its training baseline is learned
// from (metric_window.h IsBaselineSeries), and one still learning that
// baseline keeps the same, every cycle. When a job turns, what the window
// lacks is asked of the job's own Prometheus (scrape_feed.cc), as store
// mode asks the store (store_query.h NeedsStoreEvidence).

#include <cstdint>
#include <optional>

#include "jobmon/monitor/progress_tracker.h"

namespace jobmon::monitor {

// What decides a job's cadence, besides its progress.
struct ScrapeNeed {
  bool heartbeat_pending = false;     // an accusation not judged yet
  bool incident_open = false;         // a verdict stands: its evidence is watched
  bool power_baseline = false;        // a training power baseline (own or restored)
  bool tensorboard_progress = false;  // its progress comes from the scraped tb_step
};

struct ScrapeCadence {
  bool every_cycle = false;     // else once in each healthy interval
  bool full = false;            // every window series kept, else the baseline's only
  const char* why = "healthy";  // "accused", "incident", "stalled", "late", "learning", ...
};

ScrapeCadence CadenceOf(const ProgressState& state, const ScrapeNeed& need);

// Whether a job is scraped this cycle: every cycle, or once in each slot of
// `healthy_interval` seconds (0: always). Each job's slots are shifted by
// its own fraction of the interval (HealthyPhase), so thousands of jobs
// that turned healthy together are spread over the interval's cycles.
bool ScrapeDue(bool every_cycle, std::optional<double> last_scraped, double healthy_interval,
               double now, double phase = 0);
// A job's fraction of the interval, in [0, 1): spread evenly over job ids.
double HealthyPhase(uint32_t job_id);

}  // namespace jobmon::monitor
