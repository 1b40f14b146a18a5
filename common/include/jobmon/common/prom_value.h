#pragma once
// A Prometheus sample value as its text exposition and its HTTP API's JSON
// write it: a float, or NaN, +Inf (also Inf) and -Inf. The one parser for
// the monitor's scrapes (monitor/src/evidence/exposition.cc) and the
// query answers `jobmon diagnose` reads (diagnose/src/access/prom_query_sax.cc).

#include <charconv>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>

namespace jobmon {

inline std::optional<double> ParsePromValue(std::string_view text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace jobmon
