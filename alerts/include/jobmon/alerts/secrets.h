#pragma once
// Secrets (bot tokens, webhook credentials) by name: from the environment
// (JOBMON_SECRET_<NAME>, upper-cased) or from a TOML file of `name = "value"`
// that only its owner may read. A group- or world-readable file is refused:
// the error says so and names the mode. Values never appear in errors.

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon::alerts {

class Secrets {
 public:
  Secrets() = default;
  // `path` empty: environment only. The file must be owned by the user
  // reading it.
  static Expected<Secrets> Load(const std::string& path);
  // The same rules for a file another user reads (`jobmon check` run as
  // root for the daemon's user): owned by `owner`, no group or other bits.
  static Expected<Secrets> Load(const std::string& path, uid_t owner);
  // Pure: the file's text (parsed after the mode check).
  static Expected<Secrets> Parse(std::string_view toml_text, const std::string& path);

  std::optional<std::string> Get(const std::string& name) const;
  // Every value, for scrubbing text before it is logged or shown.
  std::string Redact(std::string text) const;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace jobmon::alerts
