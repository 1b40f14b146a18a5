#include "alert_command.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.h"
#include "jobmon/alerts/alerts_config.h"
#include "jobmon/alerts/receiver.h"
#include "jobmon/alerts/secrets.h"
#include "jobmon/monitor/jobmon_config.h"

namespace jobmon::cli {
namespace {

struct AlertTestArgs {
  std::string config_path;
  bool json = false;
  int evidence_lines = 1;
};

int RunAlertTest(const AlertTestArgs& args) {
  const ConfigPath where = ResolveConfigPath(args.config_path);
  auto loaded = monitor::LoadJobmonConfig(where);
  if (!loaded) return Fail("alert test", loaded.error().message);
  const monitor::MonitorConfig* monitor_config = &loaded->monitor;
  const alerts::AlertsConfig* config = &loaded->alerts;
  auto secrets = alerts::Secrets::Load(config->secrets_file);
  if (!secrets) return Fail("alert test", secrets.error().message);
  auto receivers = alerts::BuildReceivers(*config, *secrets);
  if (!receivers) return Fail("alert test", receivers.error().message);
  // The JSON-lines file too, unless it is stdout (it would mix with this report).
  if (!monitor_config->notify_file.empty() && monitor_config->notify_file != "-") {
    receivers.value().push_back(alerts::MakeFileReceiver(monitor_config->notify_file));
  }
  if (receivers->empty()) {
    return Fail("alert test",
                "no receiver configured in " + where.path +
                    (loaded->path.empty() ? " (absent; --config names another)" : "") +
                    " ([[alerts.webhook]], [[alerts.alertmanager]], "
                    "monitor.notify_file)");
  }
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const double now = NowSeconds();
  alerts::Alert alert;
  alert.status = "firing";
  alert.cluster = monitor_config->cluster;
  alert.klass = "test";
  alert.key = alerts::AlertKey(alert.cluster, 0, "test");
  alert.job_name = "jobmon-alert-test";
  alert.summary =
      std::string("a test alert from jobmon alert test on ") + host + "; no job is affected";
  alert.evidence = {"sent by `jobmon alert test`"};
  for (int i = 1; i < args.evidence_lines; ++i) {
    // Long enough to need splitting on Telegram, with characters that need escaping.
    alert.evidence.push_back("evidence line " + std::to_string(i) + ": <node" +
                             std::to_string(i % 16) + "> GPU util 100% & power 300 W of 700 W");
  }
  alert.opened_at = alert.at = now;
  const std::string key = alert.key + "/" + std::to_string(static_cast<int64_t>(now));
  nlohmann::json results = nlohmann::json::array();
  int failed = 0;
  for (const auto& receiver : receivers.value()) {
    alerts::Delivery d = receiver->Deliver(alert, key);
    // A receiver that asks for a pause (429) gets it, a few times, as the
    // daemon's outbox would give it.
    for (int retry = 0; retry < 5 && !d.ok && d.retry_after && *d.retry_after <= 30; ++retry) {
      std::this_thread::sleep_for(std::chrono::duration<double>(*d.retry_after));
      d = receiver->Deliver(alert, key);
    }
    const std::string error = secrets->Redact(d.error);
    if (!d.ok) ++failed;
    results.push_back({{"receiver", receiver->name()},
                       {"kind", receiver->kind()},
                       {"delivered", d.ok},
                       {"error", error}});
    if (!args.json) {
      std::cout << receiver->name() << " (" << receiver->kind()
                << "): " << (d.ok ? "delivered" : "FAILED: " + error) << "\n";
    }
  }
  if (args.json) std::cout << JsonText({{"results", results}});
  return failed == 0 ? kOk : kFailed;
}

}  // namespace

std::function<int()> AddAlertCommand(CLI::App& app) {
  auto args = std::make_shared<AlertTestArgs>();
  CLI::App* alert = app.add_subcommand("alert", "Alert receivers");
  CLI::App* test = alert->add_subcommand(
      "test", "Send one test alert through every configured receiver and report each result");
  alert->require_subcommand(1);
  test->add_option("-c,--config", args->config_path, kConfigOptionHelp);
  AddJsonFlag(test, args->json, "Machine-readable results");
  test->add_option("--evidence-lines", args->evidence_lines,
                   "Evidence lines in the test alert (many: a long alert, split where a receiver "
                   "limits the length)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  return Runner(test, args, RunAlertTest);
}

}  // namespace jobmon::cli
