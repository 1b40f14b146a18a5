#include "cli_common.h"

#include <sys/stat.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

namespace jobmon::cli {

int Fail(std::string_view command, std::string_view message, int code) {
  std::cerr << "jobmon " << command << ": " << message << "\n";
  return code;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool PathExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string JsonText(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void AddJsonFlag(CLI::App* cmd, bool& json, const std::string& description) {
  cmd->add_flag("--json", json, description);
}

}  // namespace jobmon::cli
