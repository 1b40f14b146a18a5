#pragma once
// Which jobmon.toml a command reads: one rule for the daemon and every CLI
// command. `--config PATH`, else $JOBMON_CONFIG, else /etc/jobmon/jobmon.toml.
// A file named by the flag or the variable must exist; the default file may
// be absent (then every built-in default holds).

#include <string>
#include <string_view>

namespace jobmon {

inline constexpr const char* kDefaultConfigPath = "/etc/jobmon/jobmon.toml";
inline constexpr const char* kConfigEnvVar = "JOBMON_CONFIG";

// For each command's --config help.
inline constexpr const char* kConfigOptionHelp =
    "jobmon.toml (default: $JOBMON_CONFIG, else /etc/jobmon/jobmon.toml when it exists, else "
    "built-in defaults; a file named here or in $JOBMON_CONFIG must exist)";

struct ConfigPath {
  std::string path;
  bool required = false;  // named by --config or $JOBMON_CONFIG: missing is an error
};

// Pure: `env_value` is $JOBMON_CONFIG's value (nullptr or empty: unset).
ConfigPath ResolveConfigPath(std::string_view flag_value, const char* env_value);
// The same with the process's $JOBMON_CONFIG.
ConfigPath ResolveConfigPath(std::string_view flag_value);

}  // namespace jobmon
