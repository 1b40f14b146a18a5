#pragma once
// What an incident's chart shows, as data: the job's steps against the
// expected line with the stall marked, and each host's GPU utilisation and
// power over the same span. The monitor fills it from its step trail and
// metric window, `jobmon diagnose` from the TSDB; gnuplot_chart.h draws it.
// Bounded: Bound() keeps at most kMaxHostPanels hosts, kMaxLinesPerPanel
// lines per panel and kMaxPointsPerLine points per line.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace jobmon::chart {

struct Point {
  double t = 0;  // unix seconds
  double v = 0;
  bool operator==(const Point&) const = default;
};

struct Line {
  std::string label;  // "GPU 0"
  std::vector<Point> points;
  bool operator==(const Line&) const = default;
};

struct HostPanel {
  std::string host;
  std::vector<Line> utilization;  // percent, per GPU
  std::vector<Line> power;        // watts, per GPU
  bool operator==(const HostPanel&) const = default;
};

struct Picture {
  std::string title;  // "Job 42 (train): hang/busy-wait"
  double from = 0, to = 0;
  std::vector<Point> steps;     // (time observed, step)
  std::vector<Point> expected;  // the expected line, two points or more
  // The stall: from the last progress to `to`, and when it was called.
  std::optional<double> stall_since, alerted_at;
  std::vector<HostPanel> hosts;
  size_t hosts_left_out = 0;  // beyond kMaxHostPanels
  bool operator==(const Picture&) const = default;
};

inline constexpr size_t kMaxHostPanels = 8;
inline constexpr size_t kMaxLinesPerPanel = 16;
inline constexpr size_t kMaxPointsPerLine = 512;

// Keeps the picture within the bounds above: hosts past kMaxHostPanels
// counted in hosts_left_out (the first in `hosts` order kept: the caller
// puts the hosts that matter first), lines past kMaxLinesPerPanel dropped,
// longer lines thinned evenly (first and last points kept), points outside
// [from, to] dropped.
void Bound(Picture& picture);

// Thins `points` to at most `max` evenly (first and last kept).
std::vector<Point> Thin(const std::vector<Point>& points, size_t max);

// For the daemon's API (`jobmon status --html` asks it for the picture).
nlohmann::json ToJson(const Picture& picture);
// Bounded on the way in: a picture from the socket is Bound() here.
Picture PictureFromJson(const nlohmann::json& json);

}  // namespace jobmon::chart
