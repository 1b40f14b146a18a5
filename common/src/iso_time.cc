#include "jobmon/common/iso_time.h"

#include <ctime>

namespace jobmon {

std::string FormatIsoUtc(double unix_seconds) {
  const std::time_t whole = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string IsoNow() { return FormatIsoUtc(static_cast<double>(std::time(nullptr))); }

}  // namespace jobmon
