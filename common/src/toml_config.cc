#include "jobmon/common/toml_config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "jobmon/common/duration.h"

namespace jobmon {

Expected<toml::table> ParseTomlConfig(std::string_view text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Error{path + ":" + std::to_string(e.source().begin.line) + ": " +
                 std::string(e.description())};
  }
}

Expected<std::string> ReadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot read: " + std::strerror(errno)};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string UnknownKeyMessage(const std::string& path, const toml::key& key,
                              std::string_view section) {
  const auto line = key.source().begin.line;
  return path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": unknown key '" +
         std::string(key.str()) + "' in [" + std::string(section) + "]";
}

Expected<void> RejectUnknownKeys(const toml::table& table,
                                 std::initializer_list<std::string_view> known,
                                 const std::string& path, std::string_view section) {
  for (const auto& [key, node] : table) {
    if (std::find(known.begin(), known.end(), key.str()) == known.end())
      return Error{UnknownKeyMessage(path, key, section)};
  }
  return {};
}

Expected<double> TomlDurationSeconds(const toml::node& node) {
  if (auto text = node.value<std::string>()) return ParseDurationSeconds(*text);
  if (auto number = node.value<double>()) return *number;
  return Error{"must be a duration (\"30s\") or a number of seconds"};
}

const toml::node* TomlSection::Get(const char* key) {
  known_.insert(key);
  return table_.get(key);
}

void TomlSection::String(const char* key, std::string& out) {
  const toml::node* node = Get(key);
  if (!node) return;
  if (auto v = node->value<std::string>()) {
    out = *v;
  } else {
    Fail(key, "must be a string");
  }
}

void TomlSection::Bool(const char* key, bool& out) {
  const toml::node* node = Get(key);
  if (!node) return;
  if (auto* v = node->as_boolean()) {
    out = v->get();
  } else {
    Fail(key, "must be true or false");
  }
}

void TomlSection::Seconds(const char* key, double& out, double minimum) {
  const toml::node* node = Get(key);
  if (!node) return;
  auto value = TomlDurationSeconds(*node);
  if (!value) return Fail(key, value.error().message);
  if (*value < minimum) return Fail(key, "must be at least " + std::to_string(minimum) + "s");
  out = *value;
}

void TomlSection::Number(const char* key, double& out, double minimum) {
  const toml::node* node = Get(key);
  if (!node) return;
  auto number = node->value<double>();
  if (!number) return Fail(key, "must be a number");
  if (*number < minimum) return Fail(key, "must be at least " + std::to_string(minimum));
  out = *number;
}

void TomlSection::Integer(const char* key, int& out, int minimum, int maximum) {
  const toml::node* node = Get(key);
  if (!node) return;
  auto number = node->value<int64_t>();
  if (!number || *number < minimum || *number > maximum) {
    return Fail(
        key, "must be an integer in " + std::to_string(minimum) + ".." + std::to_string(maximum));
  }
  out = static_cast<int>(*number);
}

void TomlSection::Strings(const char* key, std::vector<std::string>& out) {
  const toml::node* node = Get(key);
  if (!node) return;
  auto* array = node->as_array();
  if (!array) return Fail(key, "must be an array of strings");
  out.clear();
  for (const auto& item : *array) {
    auto v = item.value<std::string>();
    if (!v) return Fail(key, "must be an array of strings");
    out.push_back(*v);
  }
}

const toml::table* TomlSection::Table(const char* key) {
  const toml::node* node = Get(key);
  if (!node) return nullptr;
  if (!node->is_table()) Fail(key, "must be a table");
  return node->as_table();
}

void TomlSection::RejectUnknown() {
  for (const auto& [key, node] : table_) {
    if (!known_.contains(key.str()) && !error_) error_ = UnknownKeyMessage(path_, key, section_);
  }
}

void TomlSection::Fail(std::string_view key, const std::string& why) {
  if (!error_) error_ = path_ + ": " + section_ + "." + std::string(key) + " " + why;
}

}  // namespace jobmon
