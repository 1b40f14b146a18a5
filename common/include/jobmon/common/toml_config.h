#pragma once
// Reading jobmon.toml's sections with toml++: parsing with file:line errors,
// durations, and the refusal of unknown keys, shared by every section's
// parser (monitor, alerts, triage). A key nobody reads is a typo or a key of
// another version; left alone it would keep a default in force silently.
// A library apart from jobmon::common, which the SPANK plugin links and
// which stays free of third-party headers.

#include <toml++/toml.h>

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon {

// Errors read "path:line: what".
Expected<toml::table> ParseTomlConfig(std::string_view text, const std::string& path);
// The whole file; "path: cannot read: why" when it cannot be.
Expected<std::string> ReadConfigFile(const std::string& path);

// "path:line: unknown key 'x' in [section]" (the line when toml++ knows it).
std::string UnknownKeyMessage(const std::string& path, const toml::key& key,
                              std::string_view section);
// The first key of `table` not in `known`, as UnknownKeyMessage.
Expected<void> RejectUnknownKeys(const toml::table& table,
                                 std::initializer_list<std::string_view> known,
                                 const std::string& path, std::string_view section);

// A duration as users write one: "30s", "1m30s", "500ms" (duration.h) or a
// number of seconds. The error does not name the key; callers do.
Expected<double> TomlDurationSeconds(const toml::node& node);

// Reads one table's keys into typed fields, keeping the first error
// ("path: section.key why") and every key it was asked for, so that
// RejectUnknown, called last, finds the keys nobody read.
class TomlSection {
 public:
  TomlSection(const toml::table& table, std::string path, std::string section)
      : table_(table), path_(std::move(path)), section_(std::move(section)) {}

  void String(const char* key, std::string& out);
  void Bool(const char* key, bool& out);
  // A duration (TomlDurationSeconds) of at least `minimum` seconds.
  void Seconds(const char* key, double& out, double minimum);
  void Number(const char* key, double& out, double minimum);
  void Integer(const char* key, int& out, int minimum, int maximum);
  void Strings(const char* key, std::vector<std::string>& out);
  // A subtable ([section.key]); nullptr when absent (or not a table: an error).
  const toml::table* Table(const char* key);
  void RejectUnknown();
  void Fail(std::string_view key, const std::string& why);
  const std::optional<std::string>& error() const { return error_; }

 private:
  const toml::node* Get(const char* key);

  const toml::table& table_;
  std::string path_, section_;
  std::set<std::string, std::less<>> known_;
  std::optional<std::string> error_;
};

}  // namespace jobmon
