#include "jobmon/monitor/jobmon_config.h"

#include <sys/stat.h>

#include <cerrno>

#include "jobmon/common/http_url.h"
#include "jobmon/common/toml_config.h"

namespace jobmon::monitor {
namespace {

Expected<TriageConfig> ParseTriageSection(const toml::table& root, const std::string& path) {
  TriageConfig config;
  if (root.contains("triage") && !root["triage"].is_table())
    return Error{path + ": triage must be a table ([triage])"};
  const toml::table* section = root["triage"].as_table();
  if (!section) return config;
  TomlSection r(*section, path, "triage");
  r.String("profile", config.profile);
  r.String("step_regex", config.step_regex);
  double stall_min_seconds = 0;
  if (section->contains("stall_min_seconds")) {
    r.Seconds("stall_min_seconds", stall_min_seconds, 0);
    config.stall_min_seconds = stall_min_seconds;
  }
  r.RejectUnknown();
  if (r.error()) return Error{*r.error()};
  return config;
}

Expected<DiagnoseConfig> ParseDiagnoseSection(const toml::table& root, const std::string& path) {
  DiagnoseConfig config;
  if (root.contains("diagnose") && !root["diagnose"].is_table())
    return Error{path + ": diagnose must be a table ([diagnose])"};
  const toml::table* section = root["diagnose"].as_table();
  if (!section) return config;
  TomlSection r(*section, path, "diagnose");
  r.String("store_url", config.store_url);
  r.String("cluster", config.cluster);
  r.String("store_token_file", config.store_token_file);
  r.Seconds("store_lookback", config.store_lookback_seconds, 60);
  if (!config.store_url.empty() && !IsHttpUrl(config.store_url))
    r.Fail("store_url", "must be an http:// or https:// URL");
  r.RejectUnknown();
  if (r.error()) return Error{*r.error()};
  return config;
}

}  // namespace

Expected<JobmonConfig> ParseJobmonConfig(std::string_view text, const std::string& path) {
  auto root = ParseTomlConfig(text, path);
  if (!root) return root.error();
  if (auto known =
          RejectUnknownKeys(*root, {"monitor", "stall", "alerts", "triage", "diagnose", "recovery"},
                            path, "top level");
      !known) {
    return Error{known.error().message +
                 " (sections: [monitor], [stall], [alerts], [triage], [diagnose])"};
  }
  JobmonConfig config;
  config.path = path;
  // Each section's parser reads the text again: the file is small, and
  // their text-in interfaces stay what their tests use.
  auto monitor = ParseMonitorConfig(text, path);
  if (!monitor) return monitor.error();
  config.monitor = *monitor;
  auto alerts = alerts::ParseAlertsConfig(text, path);
  if (!alerts) return alerts.error();
  config.alerts = *alerts;
  auto triage = ParseTriageSection(*root, path);
  if (!triage) return triage.error();
  config.triage = *triage;
  // [triage] stall_min_seconds is the old name of [stall] min_stall: one
  // rule for the monitor and `jobmon triage`, so one of the two.
  if (config.triage.stall_min_seconds) {
    const bool stall_given =
        (*root)["stall"]["min_stall"] || (*root)["monitor"]["stall"]["min_stall"];
    if (stall_given)
      return Error{path +
                   ": [triage] stall_min_seconds and [stall] min_stall both set the stall "
                   "rule's floor: keep [stall] min_stall"};
    config.monitor.stall.min_stall_seconds = *config.triage.stall_min_seconds;
  }
  auto diagnose = ParseDiagnoseSection(*root, path);
  if (!diagnose) return diagnose.error();
  config.diagnose = *diagnose;
  return config;
}

Expected<JobmonConfig> LoadJobmonConfig(const ConfigPath& where) {
  struct stat st {};
  if (!where.required && stat(where.path.c_str(), &st) != 0 && errno == ENOENT) {
    return JobmonConfig{};
  }
  auto text = ReadConfigFile(where.path);
  if (!text) return text.error();
  return ParseJobmonConfig(*text, where.path);
}

}  // namespace jobmon::monitor
