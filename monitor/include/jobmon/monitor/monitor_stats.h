#pragma once
// What the daemon counts about itself, read by its metrics endpoint
// (monitor/daemon/daemon_metrics.h) and written by the core and its
// evidence feeds (monitor.h, monitor/src/evidence/evidence_feed.h).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace jobmon::monitor {

struct MonitorStats {
  size_t jobs_tracked = 0;
  size_t diag_jobs = 0;
  size_t logs_kept_open = 0;  // followed logs read on between polls (log_follower.h)
  double last_cycle_seconds = 0;
  double last_slurm_poll_seconds = 0;
  uint64_t cycles = 0;
  uint64_t slurm_failures = 0;           // Slurm polls that failed after every retry
  bool slurm_reachable = true;           // the last Slurm poll answered (and was believed)
  double slurm_unreachable_seconds = 0;  // how long it has not, 0 while it answers
  uint64_t scrapes = 0, scrape_failures = 0;
  uint64_t store_queries = 0, store_failures = 0;  // store mode
  uint64_t notify_failures = 0;
  uint64_t chart_failures = 0;   // firing incidents whose chart gnuplot did not draw
  size_t diagnoses_pending = 0;  // end-of-job diagnoses waiting or running
  std::map<std::string, uint64_t> incidents_opened;  // by class, since start
  std::map<std::string, uint64_t> recovery_steps;    // by step (recovery.h), since start
};

}  // namespace jobmon::monitor
