#pragma once
// An incident's chart as the daemon sees the job (chart/picture.h): its
// step trail, the expected line through the last progress at the job's
// median step time, the stall from the last progress to now, and each
// host's GPU utilisation and power from the metric window, the hosts the
// incident names first. Pure: the daemon draws it (chart/gnuplot_chart.h).

#include <string>
#include <vector>

#include "jobmon/chart/picture.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/progress_tracker.h"

namespace jobmon::monitor {

// How far back the chart reaches at most: the metric window's horizon.
inline constexpr double kPictureSpanSeconds = 3600;

chart::Picture IncidentPicture(const std::string& title,
                               const std::vector<ProgressTracker::TrailPoint>& trail,
                               const ProgressState& state, const MetricWindow* window,
                               const std::vector<std::string>& named_hosts, double job_start,
                               double now);

}  // namespace jobmon::monitor
