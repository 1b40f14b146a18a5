#include "jobmon/common/child_environment.h"

#include <cstdlib>
#include <string_view>

extern char** environ;

namespace jobmon {

std::vector<std::string> MinimalEnvironment(const char* const* environment) {
  std::vector<std::string> kept;
  bool has_path = false;
  for (const char* name : kMinimalEnvironmentNames) {
    const std::string_view prefix = name;
    for (const char* const* entry = environment; entry && *entry; ++entry) {
      const std::string_view line = *entry;
      if (line.size() > prefix.size() && line.substr(0, prefix.size()) == prefix &&
          line[prefix.size()] == '=') {
        kept.emplace_back(line);
        has_path |= prefix == "PATH";
        break;  // the first, as getenv takes it
      }
    }
  }
  if (!has_path) kept.insert(kept.begin(), kDefaultPath);
  return kept;
}

std::vector<std::string> MinimalEnvironment() { return MinimalEnvironment(environ); }

void KeepMinimalEnvironment() {
  const std::vector<std::string> kept = MinimalEnvironment();
  clearenv();
  for (const std::string& line : kept) {
    const size_t equals = line.find('=');
    setenv(line.substr(0, equals).c_str(), line.substr(equals + 1).c_str(), 1);
  }
}

}  // namespace jobmon
