#pragma once
// Durations as users write them in flags and config: Prometheus style
// ("500ms", "5s", "1m30s", "2h"), or a bare number of seconds ("2.5").

#include <chrono>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon {

Expected<std::chrono::milliseconds> ParseDuration(std::string_view text);
// The same, in seconds (config values and flags are doubles of seconds).
Expected<double> ParseDurationSeconds(std::string_view text);

}  // namespace jobmon
