// slurm_job_monitor: follows Slurm training jobs, detects and classifies
// hangs and heartbeat false positives, hands incidents to a notifier.
// Thin: configuration, signals and the loop; the work is jobmon::monitor.

#include <malloc.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "daemon_metrics.h"
#include "jobmon/alerts/alerts_config.h"
#include "jobmon/alerts/delivery_worker.h"
#include "jobmon/alerts/outbox.h"
#include "jobmon/alerts/secrets.h"
#include "jobmon/common/duration.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/monitor/api_server.h"
#include "jobmon/monitor/job_source.h"
#include "jobmon/monitor/jobmon_config.h"
#include "jobmon/monitor/log_follower.h"
#include "jobmon/monitor/monitor.h"
#include "jobmon/monitor/scrape.h"
#include "jobmon/monitor/state_store.h"

namespace {

using jobmon::Expected;
using jobmon::monitor::JobmonConfig;
using jobmon::monitor::MonitorConfig;

struct Overrides {
  std::string state_db, notify_file, metrics_listen, squeue, scontrol, sinfo, poll_interval,
      slurm_poll_interval, log_format, api_socket;
};

// Logs kept open between polls at most (log_follower.h): a large cluster's
// running jobs; past it, a log is opened again at each poll.
constexpr size_t kKeptLogsWanted = 65536;

// Lowers the scrape cap to what the open-file limit allows, and says so;
// the logs kept open get what is left.
void FitScrapeConcurrency(MonitorConfig& config, jobmon::monitor::EventLog& log) {
  const auto fitted =
      jobmon::monitor::FitScrapeConcurrency(config.scrape_concurrency, kKeptLogsWanted);
  jobmon::monitor::LogFollower::KeepOpenAtMost(fitted.kept_logs);
  if (fitted.concurrency >= config.scrape_concurrency) return;
  log.Warn("scrape_concurrency_lowered",
           {{"configured", std::to_string(config.scrape_concurrency)},
            {"now", std::to_string(fitted.concurrency)},
            {"open_file_limit", std::to_string(fitted.open_file_limit)},
            {"action", "raise LimitNOFILE (systemd) or ulimit -n for more scrapes at once"}});
  config.scrape_concurrency = fitted.concurrency;
}

// Receivers: the JSON-lines file (notify_file, unless empty) and every
// [[alerts.*]] of the config file, with their secrets resolved.
struct Receivers {
  jobmon::alerts::Secrets secrets;
  std::vector<std::unique_ptr<jobmon::alerts::Receiver>> owned;
  double max_backoff = 600;
};

Expected<Receivers> LoadReceivers(const jobmon::alerts::AlertsConfig& alerts,
                                  const MonitorConfig& config) {
  Receivers out;
  if (!config.notify_file.empty())
    out.owned.push_back(jobmon::alerts::MakeFileReceiver(config.notify_file));
  auto secrets = jobmon::alerts::Secrets::Load(alerts.secrets_file);
  if (!secrets) return secrets.error();
  out.secrets = *secrets;
  auto built = jobmon::alerts::BuildReceivers(alerts, out.secrets);
  if (!built) return built.error();
  for (auto& r : built.value()) out.owned.push_back(std::move(r));
  out.max_backoff = alerts.max_backoff;
  return out;
}

// Store mode's credentials: secrets named in [monitor], resolved from the
// [alerts] secrets file or the environment, kept out of the file.
Expected<void> ResolveStoreSecrets(JobmonConfig& file) {
  MonitorConfig& config = file.monitor;
  if (!config.StoreMode() ||
      (config.store_bearer_token_secret.empty() && config.store_basic_password_secret.empty())) {
    return {};
  }
  auto secrets = jobmon::alerts::Secrets::Load(file.alerts.secrets_file);
  if (!secrets) return secrets.error();
  auto resolve = [&](const std::string& name, std::string& out, const char* key) -> Expected<void> {
    if (name.empty()) return {};
    auto value = secrets->Get(name);
    if (!value) {
      return jobmon::Error{std::string("monitor.") + key + ": no secret '" + name +
                           "' in the secrets file or the environment"};
    }
    out = *value;
    return {};
  };
  if (auto r = resolve(config.store_bearer_token_secret, config.store_bearer_token,
                       "store_bearer_token_secret");
      !r)
    return r;
  return resolve(config.store_basic_password_secret, config.store_basic_password,
                 "store_basic_password_secret");
}

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The file (config_path.h's rule), then the flags over its [monitor].
Expected<JobmonConfig> Load(const jobmon::ConfigPath& where, const Overrides& o) {
  auto loaded = jobmon::monitor::LoadJobmonConfig(where);
  if (!loaded) return loaded.error();
  JobmonConfig file = *loaded;
  MonitorConfig& config = file.monitor;
  auto seconds = [](const std::string& text, const char* flag) -> Expected<double> {
    auto d = jobmon::ParseDurationSeconds(text);
    if (!d) return jobmon::Error{std::string(flag) + ": " + d.error().message};
    return *d;
  };
  if (!o.state_db.empty()) config.state_db = o.state_db;
  if (!o.notify_file.empty()) config.notify_file = o.notify_file;
  if (!o.metrics_listen.empty())
    config.metrics_listen = o.metrics_listen == "off" ? "" : o.metrics_listen;
  if (!o.squeue.empty()) config.squeue = o.squeue;
  if (!o.scontrol.empty()) config.scontrol = o.scontrol;
  if (!o.sinfo.empty()) config.sinfo = o.sinfo;
  if (!o.log_format.empty()) config.log_format = o.log_format;
  if (!o.api_socket.empty()) config.api_socket = o.api_socket == "off" ? "" : o.api_socket;
  if (!o.poll_interval.empty()) {
    auto s = seconds(o.poll_interval, "--poll-interval");
    if (!s) return s.error();
    config.poll_interval = *s;
  }
  if (!o.slurm_poll_interval.empty()) {
    auto s = seconds(o.slurm_poll_interval, "--slurm-poll-interval");
    if (!s) return s.error();
    config.slurm_poll_interval = *s;
  }
  if (config.poll_interval < 0.1) return jobmon::Error{"poll interval must be at least 100ms"};
  if (auto resolved = ResolveStoreSecrets(file); !resolved) return resolved.error();
  if (!config.metrics_listen.empty()) {
    // One loopback address:port and nothing after it.
    if (auto listen = jobmon::monitor::ParseMetricsListen(config.metrics_listen); !listen)
      return jobmon::Error{"--metrics-listen / monitor.metrics_listen: " + listen.error().message};
  }
  return file;
}

}  // namespace

int main(int argc, char** argv) {
  // Each cycle reads Slurm's answer (28 MiB at 10,000 jobs) into buffers of
  // that size. glibc would map each afresh and unmap it after, and the page
  // faults of touching it again were a fifth of the cycle: large blocks
  // come from the heap, and the heap keeps what is freed at its top.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{
      "slurm_job_monitor: follows the cluster's training jobs (logs, and the exporters of "
      "--diag jobs), raises classified incidents (hang/busy-wait, hang/node-death, "
      "heartbeat/false-positive, ...) and hands them to the configured notifier.",
      "slurm_job_monitor"};
  app.set_version_flag("--version", "slurm_job_monitor " JOBMON_VERSION);
  std::string config_path;
  Overrides o;
  bool once = false;
  app.add_option("-c,--config", config_path,
                 std::string(jobmon::kConfigOptionHelp) + "; its [monitor] and [alerts]");
  app.add_option("--state-db", o.state_db, "SQLite state database (monitor.state_db)");
  app.add_option("--notify-file", o.notify_file,
                 "Append alerts as JSON lines here, '-' for stdout (monitor.notify_file)");
  app.add_option("--metrics-listen", o.metrics_listen,
                 "Own /metrics on one loopback address, 127.0.0.1:PORT or [::1]:PORT, or 'off' "
                 "(monitor.metrics_listen)");
  app.add_option("--api-socket", o.api_socket,
                 "The read-only Unix-socket API for `jobmon status|list|watch`: users see their "
                 "own jobs, root and monitor.admin_group all; 'off': none (monitor.api_socket)");
  app.add_option("--squeue", o.squeue, "squeue to ask for jobs (monitor.squeue)");
  app.add_option("--scontrol", o.scontrol,
                 "scontrol to ask for the nodes' addresses (monitor.scontrol; Slurm 23.02+)");
  app.add_option("--sinfo", o.sinfo,
                 "sinfo to ask for the nodes' addresses on Slurm 22.05 (monitor.sinfo)");
  app.add_option("--poll-interval", o.poll_interval,
                 "Cycle interval, e.g. 10s (monitor.poll_interval)");
  app.add_option("--slurm-poll-interval", o.slurm_poll_interval,
                 "Job-list refresh interval (monitor.slurm_poll_interval)");
  app.add_option("--log-format", o.log_format, "text or json (monitor.log_format)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--once", once, "Run one cycle and exit (for cron and tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const jobmon::ConfigPath where = jobmon::ResolveConfigPath(config_path);
  auto loaded = Load(where, o);
  if (!loaded) {
    std::cerr << "slurm_job_monitor: " << loaded.error().message << "\n";
    return 2;
  }
  auto log = jobmon::monitor::MakeStderrEventLog(loaded->monitor.log_format);
  FitScrapeConcurrency(loaded.value().monitor, *log);
  const MonitorConfig* config = &loaded->monitor;

  // Signals are taken synchronously by the loop; blocked before any thread
  // (the metrics server's) exists, so none of them ever runs a handler.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGHUP, SIGTERM, SIGINT}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto store = jobmon::monitor::StateStore::Open(config->state_db);
  if (!store) {
    log->Error("state_db_unusable", {{"path", config->state_db}, {"error", store.error().message}});
    return 1;
  }
  auto source = jobmon::monitor::MakeSlurmJobSource(config->SlurmCommands());
  auto receivers = LoadReceivers(loaded->alerts, *config);
  if (!receivers) {
    log->Error("alerts_config", {{"error", receivers.error().message}});
    return 2;
  }
  std::vector<jobmon::alerts::Receiver*> receiver_list;
  std::vector<std::string> receiver_names;
  for (auto& r : receivers->owned) {
    receiver_list.push_back(r.get());
    receiver_names.push_back(r->name());
  }
  jobmon::alerts::Outbox outbox((*store)->handle(), receivers->max_backoff);
  jobmon::alerts::OutboxNotifier notifier(outbox, receiver_names);
  std::optional<jobmon::daemon::DaemonMetrics> metrics;
  if (!config->metrics_listen.empty()) {
    try {
      metrics.emplace(config->metrics_listen);
    } catch (const std::exception& e) {
      log->Error("metrics_listen_failed",
                 {{"listen", config->metrics_listen}, {"error", e.what()}});
      return 1;
    }
  }
  // Deliveries on their own threads and connections, one per receiver
  // (alerts/delivery_worker.h): a cycle waiting on Slurm or on exporters
  // holds no alert back, nor does a slow receiver hold back another.
  std::vector<std::unique_ptr<jobmon::alerts::DeliveryWorker>> delivery;
  for (jobmon::alerts::Receiver* receiver : receiver_list) {
    auto worker = jobmon::alerts::DeliveryWorker::Open(
        {.state_db = config->state_db,
         .max_backoff = receivers->max_backoff,
         .interval_seconds = std::min(1.0, config->poll_interval),
         .budget_seconds = std::max(1.0, config->poll_interval)},
        {receiver},
        [&log, &receivers, &metrics](const jobmon::alerts::DeliveryRound& round) {
          for (const std::string& error : round.errors) {
            log->Warn("alert_delivery_failed", {{"error", receivers->secrets.Redact(error)},
                                                {"action", "retried with backoff"}});
          }
          if (round.delivered > 0) {
            log->Info("alerts_delivered", {{"count", std::to_string(round.delivered)}});
          }
          if (metrics) metrics->Deliveries(round);
        },
        WallNow);
    if (!worker) {
      log->Error("delivery_unavailable", {{"error", worker.error().message}});
      return 1;
    }
    delivery.push_back(std::move(worker).value());
  }
  // The users' view (`jobmon status` as themselves). Without it the monitor
  // still does its work: alerts matter more than the view.
  std::unique_ptr<jobmon::monitor::ApiServer> api;
  if (!config->api_socket.empty()) {
    auto started = jobmon::monitor::ApiServer::Start({.socket_path = config->api_socket,
                                                      .state_db = config->state_db,
                                                      .admin_group = config->admin_group});
    if (started) {
      api = std::move(started).value();
    } else {
      log->Error("api_unavailable",
                 {{"socket", config->api_socket},
                  {"error", started.error().message},
                  {"action", "running without it; jobmon falls back to the database for root"}});
    }
  }
  // End-of-job diagnoses a SIGKILL cut short leave their read-only
  // Prometheus running (detached): stopped now, by pid and what it serves.
  for (const std::string& line : jobmon::diagnose::StopOrphanedSessions()) {
    log->Warn("orphaned_diagnosis_stopped", {{"session", line}});
  }
  jobmon::monitor::Monitor monitor(*config, **store, *source, notifier, *log);
  if (auto restored = monitor.Restore(WallNow()); !restored) {
    log->Error("restore_failed", {{"error", restored.error().message}});
    return 1;
  }
  log->Info("started",
            {{"config", loaded->path.empty() ? "(defaults)" : loaded->path},
             {"state_db", config->state_db},
             {"poll_interval_s", std::to_string(config->poll_interval)},
             {"receivers", receiver_names.empty() ? std::string("none") : [&] {
                std::string names;
                for (const auto& n : receiver_names) names += (names.empty() ? "" : ",") + n;
                return names;
              }()},
             {"metrics", config->metrics_listen.empty() ? "off" : config->metrics_listen},
             {"evidence", config->StoreMode()
                              ? "store " + config->store_url
                              : "scrape, " + std::to_string(config->scrape_concurrency) +
                                    " at once"},
             {"api_socket", api ? config->api_socket : "off"}});
  if (!once) {
    for (auto& worker : delivery) worker->Start();
  }
  while (true) {
    const double started = WallNow();
    if (api) {
      // Users' watch requests: written by this thread, the store's only writer.
      for (const auto& w : api->TakeWatches()) {
        if (w.hold) {
          auto held = (*store)->HoldRecovery(w.job_id, started, w.uid.value_or(0));
          log->Info(held ? "recovery_held" : "hold_not_recorded",
                    {{"job", std::to_string(w.job_id)},
                     {"by_uid", std::to_string(w.uid.value_or(0))},
                     {"error", held ? "" : held.error().message}});
          continue;
        }
        if (auto added = (*store)->AddWatch(w.job_id, started, w.uid); !added) {
          log->Warn("watch_not_recorded",
                    {{"job", std::to_string(w.job_id)}, {"error", added.error().message}});
        }
      }
    }
    monitor.Cycle(started);
    // After the cycle committed: what it queued is durable before any send.
    if (once) {
      for (auto& worker : delivery) worker->RunRound();
      if (metrics) metrics->Update(monitor.stats());
      break;
    }
    for (auto& worker : delivery) worker->Wake();
    if (metrics) metrics->Update(monitor.stats());
    // Sleep until the next cycle, waking for signals.
    int sig = 0;
    while (true) {
      double left = started + monitor.config().poll_interval - WallNow();
      if (left <= 0) break;
      timespec wait{static_cast<time_t>(left), static_cast<long>((left - std::floor(left)) * 1e9)};
      sig = sigtimedwait(&signals, nullptr, &wait);
      if (sig > 0) break;
      if (sig < 0 && errno != EAGAIN && errno != EINTR) break;
    }
    if (sig == SIGTERM || sig == SIGINT) {
      log->Info("stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      break;
    }
    if (sig == SIGHUP) {
      auto reloaded = Load(where, o);
      if (!reloaded) {
        log->Error("config_reload_failed",
                   {{"error", reloaded.error().message}, {"action", "keeping the running config"}});
      } else {
        // Receivers stay as started ([alerts] is checked, not applied).
        MonitorConfig next = reloaded->monitor;
        if (next.state_db != monitor.config().state_db ||
            next.metrics_listen != monitor.config().metrics_listen ||
            next.notify_file != monitor.config().notify_file ||
            next.api_socket != monitor.config().api_socket ||
            next.admin_group != monitor.config().admin_group) {
          log->Warn("config_needs_restart",
                    {{"keys", "state_db, metrics_listen, notify_file, api_socket, admin_group"},
                     {"action", "kept as they were; restart to change them"}});
          next.state_db = monitor.config().state_db;
          next.metrics_listen = monitor.config().metrics_listen;
          next.notify_file = monitor.config().notify_file;
          next.api_socket = monitor.config().api_socket;
          next.admin_group = monitor.config().admin_group;
        }
        monitor.Reconfigure(next);
        log->Info("config_reloaded", {{"config", where.path}});
      }
    }
  }
  return 0;
}
