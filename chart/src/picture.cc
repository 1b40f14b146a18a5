#include "jobmon/chart/picture.h"

#include <algorithm>

namespace jobmon::chart {

std::vector<Point> Thin(const std::vector<Point>& points, size_t max) {
  if (points.size() <= max || max < 2) {
    if (max == 1 && !points.empty()) return {points.back()};
    return points;
  }
  std::vector<Point> out;
  out.reserve(max);
  const double stride = static_cast<double>(points.size() - 1) / static_cast<double>(max - 1);
  for (size_t i = 0; i < max; ++i) {
    out.push_back(points[static_cast<size_t>(static_cast<double>(i) * stride + 0.5)]);
  }
  out.back() = points.back();
  return out;
}

namespace {

std::vector<Point> InRange(const std::vector<Point>& points, double from, double to) {
  std::vector<Point> kept;
  for (const Point& p : points) {
    if (p.t >= from && p.t <= to) kept.push_back(p);
  }
  return kept;
}

void BoundLines(std::vector<Line>& lines, double from, double to) {
  if (lines.size() > kMaxLinesPerPanel) lines.resize(kMaxLinesPerPanel);
  for (Line& line : lines) line.points = Thin(InRange(line.points, from, to), kMaxPointsPerLine);
}

}  // namespace

void Bound(Picture& picture) {
  if (picture.to < picture.from) std::swap(picture.to, picture.from);
  picture.steps = Thin(InRange(picture.steps, picture.from, picture.to), kMaxPointsPerLine);
  picture.expected = Thin(picture.expected, kMaxPointsPerLine);
  if (picture.hosts.size() > kMaxHostPanels) {
    picture.hosts_left_out += picture.hosts.size() - kMaxHostPanels;
    picture.hosts.resize(kMaxHostPanels);
  }
  for (HostPanel& host : picture.hosts) {
    BoundLines(host.utilization, picture.from, picture.to);
    BoundLines(host.power, picture.from, picture.to);
  }
}

namespace {

nlohmann::json PointsJson(const std::vector<Point>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const Point& p : points) out.push_back({p.t, p.v});
  return out;
}

std::vector<Point> PointsFrom(const nlohmann::json& json) {
  std::vector<Point> out;
  if (!json.is_array()) return out;
  for (const auto& p : json) {
    if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number()) {
      out.push_back({p[0].get<double>(), p[1].get<double>()});
    }
    if (out.size() >= 4 * kMaxPointsPerLine) break;  // Bound thins the rest
  }
  return out;
}

nlohmann::json LinesJson(const std::vector<Line>& lines) {
  nlohmann::json out = nlohmann::json::array();
  for (const Line& line : lines) {
    out.push_back({{"label", line.label}, {"points", PointsJson(line.points)}});
  }
  return out;
}

std::string StringFrom(const nlohmann::json& json, const char* key) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<double> NumberFrom(const nlohmann::json& json, const char* key) {
  auto it = json.find(key);
  if (it == json.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::vector<Line> LinesFrom(const nlohmann::json& json) {
  std::vector<Line> out;
  if (!json.is_array()) return out;
  for (const auto& line : json) {
    if (!line.is_object()) continue;
    out.push_back({StringFrom(line, "label"), PointsFrom(line.value("points", nlohmann::json()))});
    if (out.size() >= kMaxLinesPerPanel) break;
  }
  return out;
}

}  // namespace

nlohmann::json ToJson(const Picture& picture) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostPanel& host : picture.hosts) {
    hosts.push_back({{"host", host.host},
                     {"utilization", LinesJson(host.utilization)},
                     {"power", LinesJson(host.power)}});
  }
  nlohmann::json out = {{"title", picture.title},
                        {"from", picture.from},
                        {"to", picture.to},
                        {"steps", PointsJson(picture.steps)},
                        {"expected", PointsJson(picture.expected)},
                        {"hosts", hosts},
                        {"hosts_left_out", picture.hosts_left_out}};
  if (picture.stall_since) out["stall_since"] = *picture.stall_since;
  if (picture.alerted_at) out["alerted_at"] = *picture.alerted_at;
  return out;
}

Picture PictureFromJson(const nlohmann::json& json) {
  Picture picture;
  if (!json.is_object()) return picture;
  picture.title = StringFrom(json, "title");
  picture.from = NumberFrom(json, "from").value_or(0);
  picture.to = NumberFrom(json, "to").value_or(0);
  picture.steps = PointsFrom(json.value("steps", nlohmann::json()));
  picture.expected = PointsFrom(json.value("expected", nlohmann::json()));
  picture.stall_since = NumberFrom(json, "stall_since");
  picture.alerted_at = NumberFrom(json, "alerted_at");
  if (auto hosts = json.find("hosts"); hosts != json.end() && hosts->is_array()) {
    for (const auto& host : *hosts) {
      if (!host.is_object()) continue;
      picture.hosts.push_back({StringFrom(host, "host"),
                               LinesFrom(host.value("utilization", nlohmann::json())),
                               LinesFrom(host.value("power", nlohmann::json()))});
      if (picture.hosts.size() > 4 * kMaxHostPanels) break;
    }
  }
  if (auto left = NumberFrom(json, "hosts_left_out"); left && *left >= 0 && *left < 1e9) {
    picture.hosts_left_out = static_cast<size_t>(*left);
  }
  Bound(picture);
  return picture;
}

}  // namespace jobmon::chart
