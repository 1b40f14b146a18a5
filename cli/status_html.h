#pragma once
// `jobmon status JOB --html FILE`: the status view as a self-contained HTML
// report (chart/html_report.h) with the chart the daemon drew when the
// job's newest incident fired. Pure; the command writes the file.

#include <optional>
#include <string>
#include <utility>

#include "jobmon/chart/html_report.h"
#include "status_view.h"

namespace jobmon::cli {

chart::HtmlPage StatusHtmlPage(const StatusView& view,
                               const std::optional<std::pair<int64_t, std::string>>& chart);

}  // namespace jobmon::cli
