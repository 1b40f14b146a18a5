#pragma once
// How `jobmon status`, `list` and `watch` reach the daemon: its API socket
// when there is one, else its state database; the options they share.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/monitor/api_protocol.h"
#include "jobmon/monitor/monitor_config.h"

namespace jobmon::cli {

struct CommonArgs {
  std::string config_path;
  std::string db;
  std::string socket;
  bool json = false;
};

// --socket, --db, --config, --json.
void AddCommon(CLI::App* cmd, CommonArgs& args);

// [monitor] of jobmon.toml (--config, else the default path).
Expected<monitor::MonitorConfig> Config(const CommonArgs& args);

std::string DbPath(const CommonArgs& args, const monitor::MonitorConfig& config);
std::string SocketPath(const CommonArgs& args, const monitor::MonitorConfig& config);

// The daemon's answer through its socket; nullopt when the API is not to be
// used (--db given, or no socket there). A daemon that cannot be reached is
// an error the caller reports before falling back to the database.
std::optional<Expected<nlohmann::json>> AskDaemon(const CommonArgs& args,
                                                  const monitor::MonitorConfig& config,
                                                  const monitor::api::Request& request);

// An answer refusing with this code ("forbidden", "not_found", ...).
bool Refused(const nlohmann::json& answer, std::string_view code);

}  // namespace jobmon::cli
