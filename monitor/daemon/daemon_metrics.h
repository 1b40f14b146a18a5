#pragma once
// The daemon's own /metrics (loopback only): jobs tracked, cycle and Slurm
// poll durations, incidents by class, failures.

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <string>

#include "jobmon/alerts/outbox.h"
#include "jobmon/common/metrics_server.h"
#include "jobmon/monitor/monitor_stats.h"

namespace jobmon::daemon {

class DaemonMetrics {
 public:
  // `listen` is one loopback "address:port" (monitor::ParseMetricsListen;
  // anything else throws, as a failed bind does).
  explicit DaemonMetrics(const std::string& listen);
  void Update(const monitor::MonitorStats& stats);
  void Deliveries(const alerts::DeliveryRound& round);

 private:
  void Advance(prometheus::Counter& counter, uint64_t total);

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<MetricsServer> server_;
  prometheus::Gauge* jobs_ = nullptr;
  prometheus::Gauge* diag_jobs_ = nullptr;
  prometheus::Gauge* logs_kept_open_ = nullptr;
  prometheus::Gauge* diagnoses_pending_ = nullptr;
  prometheus::Gauge* slurm_reachable_ = nullptr;
  prometheus::Gauge* slurm_poll_seconds_ = nullptr;
  prometheus::Gauge* slurm_unreachable_seconds_ = nullptr;
  prometheus::Histogram* cycle_seconds_ = nullptr;
  prometheus::Counter* cycles_ = nullptr;
  prometheus::Counter* slurm_failures_ = nullptr;
  prometheus::Counter* scrapes_ = nullptr;
  prometheus::Counter* scrape_failures_ = nullptr;
  prometheus::Counter* store_queries_ = nullptr;
  prometheus::Counter* store_failures_ = nullptr;
  prometheus::Counter* notify_failures_ = nullptr;
  prometheus::Counter* chart_failures_ = nullptr;
  prometheus::Family<prometheus::Counter>* incidents_ = nullptr;
  prometheus::Family<prometheus::Counter>* recovery_steps_ = nullptr;
  prometheus::Family<prometheus::Counter>* deliveries_ = nullptr;
  std::map<prometheus::Counter*, uint64_t> seen_;
};

}  // namespace jobmon::daemon
