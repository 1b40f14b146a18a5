#include "jobmon/common/iso_time.h"

#include <cstdio>
#include <ctime>

namespace jobmon {

std::string FormatIsoUtc(double unix_seconds) {
  // Years 0000-9999 only: a time past them (a projection from a corrupt
  // log: 1e35 s, NaN) is said to be so; its cast to time_t was undefined
  // (fuzz_triage_log, tests/fuzz/regressions/triage-time-out-of-range.input).
  constexpr double kFirst = -62167219200.0;  // 0000-01-01T00:00:00Z
  constexpr double kLast = 253402300799.0;   // 9999-12-31T23:59:59Z
  if (!(unix_seconds >= kFirst && unix_seconds <= kLast)) return kTimeOutOfRange;
  const std::time_t whole = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  if (!gmtime_r(&whole, &utc)) return kTimeOutOfRange;
  // Not strftime's %Y: glibc writes the years before 1000 unpadded.
  char buffer[80];  // room for any int fields, as the compiler cannot know them bounded
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  return buffer;
}

std::string IsoNow() { return FormatIsoUtc(static_cast<double>(std::time(nullptr))); }

}  // namespace jobmon
