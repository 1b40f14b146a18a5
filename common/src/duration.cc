#include "jobmon/common/duration.h"

#include <charconv>
#include <cmath>
#include <string>

namespace jobmon {

Expected<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto invalid = [&](const std::string& why) {
    return Error{"invalid duration '" + std::string(text) + "': " + why +
                 " (examples: 500ms, 5s, 1m30s, 2h, 2.5)"};
  };
  if (text.empty()) return invalid("empty");
  double total_ms = 0;
  std::string_view rest = text;
  bool bare_number = true;
  while (!rest.empty()) {
    double value = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || value < 0 || !std::isfinite(value))
      return invalid("expected a number");
    rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    double unit_ms = 0;
    if (rest.empty()) {
      if (!bare_number) return invalid("missing unit after the last number");
      unit_ms = 1000;
    } else if (rest.substr(0, 2) == "ms") {
      unit_ms = 1;
      rest.remove_prefix(2);
    } else if (rest.front() == 's' || rest.front() == 'm' || rest.front() == 'h') {
      unit_ms = rest.front() == 's' ? 1000 : rest.front() == 'm' ? 60000 : 3600000;
      rest.remove_prefix(1);
    } else {
      return invalid("unknown unit");
    }
    bare_number = false;
    total_ms += value * unit_ms;
  }
  if (total_ms > 366.0 * 24 * 3600 * 1000) return invalid("longer than a year");
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(total_ms)));
}

Expected<double> ParseDurationSeconds(std::string_view text) {
  auto parsed = ParseDuration(text);
  if (!parsed) return parsed.error();
  return static_cast<double>(parsed->count()) / 1000.0;
}

}  // namespace jobmon
