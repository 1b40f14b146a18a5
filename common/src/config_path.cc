#include "jobmon/common/config_path.h"

#include <cstdlib>

namespace jobmon {

ConfigPath ResolveConfigPath(std::string_view flag_value, const char* env_value) {
  if (!flag_value.empty()) return {std::string(flag_value), true};
  if (env_value && *env_value) return {env_value, true};
  return {kDefaultConfigPath, false};
}

ConfigPath ResolveConfigPath(std::string_view flag_value) {
  return ResolveConfigPath(flag_value, std::getenv(kConfigEnvVar));
}

}  // namespace jobmon
