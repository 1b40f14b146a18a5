#include "jobmon/monitor/incident_picture.h"

#include <algorithm>
#include <set>

#include "jobmon/common/metric_names.h"

namespace jobmon::monitor {
namespace {

std::vector<chart::Line> GpuLines(const MetricWindow& window, const std::string& host,
                                  const char* name) {
  std::vector<chart::Line> lines;
  for (const auto& [gpu, points] : window.PointsOf(host, name)) {
    chart::Line line{gpu.empty() ? std::string("GPU") : "GPU " + gpu, {}};
    for (const auto& [t, v] : points) line.points.push_back({t, v});
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

chart::Picture IncidentPicture(const std::string& title,
                               const std::vector<ProgressTracker::TrailPoint>& trail,
                               const ProgressState& state, const MetricWindow* window,
                               const std::vector<std::string>& named_hosts, double job_start,
                               double now) {
  chart::Picture picture;
  picture.title = title;
  picture.to = now;
  picture.from = std::max(job_start, now - kPictureSpanSeconds);
  if (!trail.empty())
    picture.from = std::max(std::min(picture.from, trail.front().t), now - kPictureSpanSeconds);
  for (const auto& point : trail) {
    picture.steps.push_back({point.t, static_cast<double>(point.step)});
  }

  // The expected line passes through the last progress at the median step
  // time: before the stall it lies on the observed steps, after it the gap
  // is the progress the stall cost.
  if (!trail.empty() && state.median_interval && *state.median_interval > 0) {
    const auto& last = trail.back();
    const double rate = 1.0 / *state.median_interval;
    const double first_t = std::max(picture.from, trail.front().t);
    picture.expected = {{first_t, static_cast<double>(last.step) - (last.t - first_t) * rate},
                        {now, static_cast<double>(last.step) + (now - last.t) * rate}};
    if (picture.expected.front().v < 0) {
      // Not before step 0: start the line where it reaches it.
      picture.expected.front() = {last.t - static_cast<double>(last.step) / rate, 0};
    }
  }
  if (state.phase == Phase::kStalled) {
    double since = std::max(state.last_step_time.value_or(0), state.last_activity_time.value_or(0));
    if (since <= 0) since = job_start;  // no progress at all: stalled since the start
    picture.stall_since = std::clamp(since, picture.from, now);
    picture.alerted_at = now;
  }

  if (window) {
    std::vector<std::string> hosts;
    std::set<std::string> seen;
    const std::vector<std::string> all = window->hosts();
    for (const std::string& host : named_hosts) {
      if (std::find(all.begin(), all.end(), host) != all.end() && seen.insert(host).second) {
        hosts.push_back(host);
      }
    }
    for (const std::string& host : all) {
      if (seen.insert(host).second) hosts.push_back(host);
    }
    for (const std::string& host : hosts) {
      chart::HostPanel panel{host, GpuLines(*window, host, metric_names::kGpuUtilizationPercent),
                             GpuLines(*window, host, metric_names::kGpuPowerWatts)};
      // A host without GPU samples gets a panel only when the incident
      // names it (a dead host's empty panel says so); others would be blank.
      const bool named =
          std::find(named_hosts.begin(), named_hosts.end(), host) != named_hosts.end();
      if (named || !panel.utilization.empty() || !panel.power.empty()) {
        picture.hosts.push_back(std::move(panel));
      }
    }
  }
  chart::Bound(picture);
  return picture;
}

}  // namespace jobmon::monitor
