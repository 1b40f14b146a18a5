#include "daemon_access.h"

#include "cli_common.h"
#include "jobmon/monitor/api_client.h"
#include "jobmon/monitor/jobmon_config.h"

namespace jobmon::cli {

using nlohmann::json;

void AddCommon(CLI::App* cmd, CommonArgs& args) {
  cmd->add_option("--socket", args.socket,
                  "The daemon's API socket (default: monitor.api_socket); used when present");
  cmd->add_option("--db", args.db,
                  "Read the daemon's state database instead of its API (default: "
                  "monitor.state_db, when the socket is absent; needs read access: root or "
                  "the daemon's group)");
  cmd->add_option("-c,--config", args.config_path, kConfigOptionHelp);
  AddJsonFlag(cmd, args.json);
}

Expected<monitor::MonitorConfig> Config(const CommonArgs& args) {
  auto loaded = monitor::LoadJobmonConfig(args.config_path);
  if (!loaded) return loaded.error();
  return loaded->monitor;
}

std::string DbPath(const CommonArgs& args, const monitor::MonitorConfig& config) {
  return args.db.empty() ? config.state_db : args.db;
}

std::string SocketPath(const CommonArgs& args, const monitor::MonitorConfig& config) {
  return args.socket.empty() ? config.api_socket : args.socket;
}

std::optional<Expected<json>> AskDaemon(const CommonArgs& args,
                                        const monitor::MonitorConfig& config,
                                        const monitor::api::Request& request) {
  const std::string socket = SocketPath(args, config);
  if (!args.db.empty() || socket.empty() || !PathExists(socket)) return std::nullopt;
  return monitor::CallApi(socket, request);
}

bool Refused(const json& answer, std::string_view code) {
  return !answer.value("ok", false) && answer.value("code", "") == code;
}

}  // namespace jobmon::cli
