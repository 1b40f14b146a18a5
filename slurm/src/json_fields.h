#pragma once
// The shapes one field of Slurm's JSON takes across 22.05 to 25.11, read in
// one place: a number plain (openapi v0.0.38..v0.0.39) or as data_parser's
// `{"set": bool, "infinite": bool, "number": N}` (v0.0.40+), a state as a
// string or a list of flags (base state first), and the `errors` list,
// whose entries are `{"error": text, "errno": N}` (v0.0.38) or
// `{"description", "error", "error_number", "source"}` (v0.0.39+).

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace jobmon::slurm {

inline std::string Text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A boolean field; false when absent or of another type (json::value would
// throw on a field of the wrong type).
inline bool Flag(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// A number, or a set and finite {set, infinite, number}; nullopt otherwise.
inline std::optional<uint64_t> Number(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_object() && Flag(value, "set") && !Flag(value, "infinite")) {
    auto n = value.find("number");
    if (n != value.end() && n->is_number_unsigned()) return n->get<uint64_t>();
  }
  return std::nullopt;
}

// Slurm's NO_VAL (0xfffffffe) and INFINITE (0xffffffff) in a plain uint32
// field mean "none", as `set: false` does in the object form.
template <typename T>
std::optional<T> Unsigned(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  auto v = Number(*it);
  if (!v || *v > std::numeric_limits<T>::max()) return std::nullopt;
  if (sizeof(T) == 4 && *v >= 0xfffffffeULL) return std::nullopt;
  return static_cast<T>(*v);
}

// Unix seconds; nullopt when absent, unset or 0 (not yet known).
inline std::optional<double> Time(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_number() && !it->is_number_unsigned()) {
    const double v = it->get<double>();
    return v > 0 ? std::optional<double>(v) : std::nullopt;
  }
  auto v = Number(*it);
  if (!v || *v == 0) return std::nullopt;
  return static_cast<double>(*v);
}

// "RUNNING"; 23.11+ gives a list, base state first (["RUNNING", "COMPLETING"]).
inline std::string State(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it != object.end() && it->is_array() && !it->empty() && it->front().is_string())
    return it->front().get<std::string>();
  return Text(object, key);
}

// Every entry of the document's "errors", as text ("" entries skipped).
inline std::vector<std::string> Errors(const nlohmann::json& doc) {
  std::vector<std::string> out;
  auto errors = doc.find("errors");
  if (errors == doc.end() || !errors->is_array()) return out;
  for (const auto& e : *errors) {
    if (e.is_string()) {
      if (!e.get<std::string>().empty()) out.push_back(e.get<std::string>());
      continue;
    }
    if (!e.is_object()) continue;
    std::string text = Text(e, "description");
    const std::string error = Text(e, "error");
    if (!error.empty() && error != text) text += text.empty() ? error : " (" + error + ")";
    if (text.empty()) {
      for (const char* key : {"error_number", "errno"}) {
        if (auto n = e.find(key); n != e.end() && n->is_number()) {
          text = "Slurm error " + std::to_string(n->get<int64_t>());
          break;
        }
      }
    }
    if (!text.empty()) out.push_back(std::move(text));
  }
  return out;
}

}  // namespace jobmon::slurm
