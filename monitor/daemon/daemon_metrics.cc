#include "daemon_metrics.h"

#include <stdexcept>

#include "jobmon/monitor/monitor_config.h"

namespace jobmon::daemon {

namespace {

// libmicrohttpd with the loopback limits (MetricsServerLimits::Loopback):
// a local user's idle or half-sent connections hold no thread and are
// closed after 1 s, so they cannot starve the monitoring scrape.
std::unique_ptr<MetricsServer> StartServer(const std::string& listen) {
  auto address = monitor::ParseMetricsListen(listen);
  if (!address) throw std::invalid_argument(address.error().message);
  auto server = MetricsServer::Start(*address, MetricsServerLimits::Loopback());
  if (!server) throw std::runtime_error(server.error().message);
  return std::move(server).value();
}

}  // namespace

DaemonMetrics::DaemonMetrics(const std::string& listen)
    : registry_(std::make_shared<prometheus::Registry>()), server_(StartServer(listen)) {
  using prometheus::BuildCounter;
  using prometheus::BuildGauge;
  using prometheus::BuildHistogram;
  auto& r = *registry_;
  jobs_ = &BuildGauge()
               .Name("jobmon_monitor_jobs_tracked")
               .Help("Jobs followed now")
               .Register(r)
               .Add({});
  diag_jobs_ = &BuildGauge()
                    .Name("jobmon_monitor_diag_jobs")
                    .Help("Followed jobs whose exporters the daemon scrapes (--diag)")
                    .Register(r)
                    .Add({});
  logs_kept_open_ =
      &BuildGauge()
           .Name("jobmon_monitor_logs_kept_open")
           .Help("Followed logs kept open between polls (within the open-file limit's room)")
           .Register(r)
           .Add({});
  diagnoses_pending_ = &BuildGauge()
                            .Name("jobmon_monitor_diagnoses_pending")
                            .Help("End-of-job diagnoses waiting for their archive or running")
                            .Register(r)
                            .Add({});
  slurm_reachable_ = &BuildGauge()
                          .Name("jobmon_monitor_slurm_reachable")
                          .Help("1 when the last Slurm poll answered")
                          .Register(r)
                          .Add({});
  slurm_unreachable_seconds_ =
      &BuildGauge()
           .Name("jobmon_monitor_slurm_unreachable_seconds")
           .Help("How long Slurm has not given a believable answer (0 while it does)")
           .Register(r)
           .Add({});
  slurm_poll_seconds_ = &BuildGauge()
                             .Name("jobmon_monitor_slurm_poll_duration_seconds")
                             .Help("Duration of the last Slurm poll, retries included")
                             .Register(r)
                             .Add({});
  cycle_seconds_ = &BuildHistogram()
                        .Name("jobmon_monitor_poll_duration_seconds")
                        .Help("Duration of one poll cycle (Slurm, scrapes, logs, state)")
                        .Register(r)
                        .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.05, 0.1, 0.25, 0.5,
                                                                         1, 2.5, 5, 10});
  cycles_ =
      &BuildCounter().Name("jobmon_monitor_polls_total").Help("Poll cycles").Register(r).Add({});
  slurm_failures_ = &BuildCounter()
                         .Name("jobmon_monitor_slurm_poll_failures_total")
                         .Help("Slurm polls that failed after every retry")
                         .Register(r)
                         .Add({});
  scrapes_ = &BuildCounter()
                  .Name("jobmon_monitor_scrapes_total")
                  .Help("Scrapes of job exporters")
                  .Register(r)
                  .Add({});
  scrape_failures_ = &BuildCounter()
                          .Name("jobmon_monitor_scrape_failures_total")
                          .Help("Failed scrapes of job exporters")
                          .Register(r)
                          .Add({});
  store_queries_ = &BuildCounter()
                        .Name("jobmon_monitor_store_queries_total")
                        .Help("Queries of the central store (evidence = \"store\")")
                        .Register(r)
                        .Add({});
  store_failures_ = &BuildCounter()
                         .Name("jobmon_monitor_store_failures_total")
                         .Help("Queries of the central store that got no answer")
                         .Register(r)
                         .Add({});
  notify_failures_ = &BuildCounter()
                          .Name("jobmon_monitor_notify_failures_total")
                          .Help("Alerts the notifier could not deliver")
                          .Register(r)
                          .Add({});
  chart_failures_ = &BuildCounter()
                         .Name("jobmon_monitor_chart_failures_total")
                         .Help("Firing incidents whose chart gnuplot did not draw")
                         .Register(r)
                         .Add({});
  incidents_ = &BuildCounter()
                    .Name("jobmon_monitor_incidents_total")
                    .Help("Incidents opened, by class")
                    .Register(r);
  recovery_steps_ =
      &BuildCounter()
           .Name("jobmon_monitor_recovery_steps_total")
           .Help("Recovery steps taken (or refused, held, failed) for hang incidents, by step")
           .Register(r);
  deliveries_ = &BuildCounter()
                     .Name("jobmon_monitor_alert_deliveries_total")
                     .Help("Alert deliveries by result (delivered, retried, failed)")
                     .Register(r);
  server_->RegisterCollectable(registry_);
}

void DaemonMetrics::Advance(prometheus::Counter& counter, uint64_t total) {
  uint64_t& seen = seen_[&counter];
  if (total > seen) counter.Increment(static_cast<double>(total - seen));
  seen = total;
}

void DaemonMetrics::Update(const monitor::MonitorStats& s) {
  jobs_->Set(static_cast<double>(s.jobs_tracked));
  diag_jobs_->Set(static_cast<double>(s.diag_jobs));
  logs_kept_open_->Set(static_cast<double>(s.logs_kept_open));
  diagnoses_pending_->Set(static_cast<double>(s.diagnoses_pending));
  slurm_reachable_->Set(s.slurm_reachable ? 1 : 0);
  slurm_unreachable_seconds_->Set(s.slurm_unreachable_seconds);
  slurm_poll_seconds_->Set(s.last_slurm_poll_seconds);
  cycle_seconds_->Observe(s.last_cycle_seconds);
  Advance(*cycles_, s.cycles);
  Advance(*slurm_failures_, s.slurm_failures);
  Advance(*scrapes_, s.scrapes);
  Advance(*scrape_failures_, s.scrape_failures);
  Advance(*store_queries_, s.store_queries);
  Advance(*store_failures_, s.store_failures);
  Advance(*notify_failures_, s.notify_failures);
  Advance(*chart_failures_, s.chart_failures);
  for (const auto& [klass, count] : s.incidents_opened) {
    Advance(incidents_->Add({{"class", klass}}), count);
  }
  for (const auto& [step, count] : s.recovery_steps) {
    Advance(recovery_steps_->Add({{"step", step}}), count);
  }
}

void DaemonMetrics::Deliveries(const alerts::DeliveryRound& round) {
  deliveries_->Add({{"result", "delivered"}}).Increment(round.delivered);
  deliveries_->Add({{"result", "retried"}}).Increment(round.retried);
  deliveries_->Add({{"result", "failed"}}).Increment(round.failed);
}

}  // namespace jobmon::daemon
