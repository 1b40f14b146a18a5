#pragma once
// Unix seconds as ISO 8601 UTC, "2026-11-22T13:59:09Z": the one format of
// times in reports, manifests and alerts (Alertmanager's RFC 3339 included).

#include <string>

namespace jobmon {

// What FormatIsoUtc writes for a time outside the years 0000-9999 (or NaN).
inline constexpr const char* kTimeOutOfRange = "(time out of range)";

std::string FormatIsoUtc(double unix_seconds);

// The current time, to the second.
std::string IsoNow();

}  // namespace jobmon
