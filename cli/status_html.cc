#include "status_html.h"

#include <fmt/format.h>

#include "jobmon/common/iso_time.h"

namespace jobmon::cli {

chart::HtmlPage StatusHtmlPage(const StatusView& view,
                               const std::optional<std::pair<int64_t, std::string>>& chart) {
  chart::HtmlPage page;
  page.title = "jobmon status: " + view.title;
  if (view.name) page.title += " (" + *view.name + ")";
  page.subtitle = "state " + (view.state.empty() ? std::string("unknown") : view.state);
  if (view.klass) page.subtitle += ", class " + *view.klass;
  if (!view.slurm_state.empty()) page.subtitle += ", Slurm " + view.slurm_state;
  page.subtitle += ", as of " + FormatIsoUtc(view.now);
  if (chart) {
    std::string caption = fmt::format(
        "Incident {} as its alert showed it: steps against the expected line (the stall "
        "shaded, the alert a red line) and, where the hosts report GPUs, each host's GPU "
        "utilisation and power.",
        chart->first);
    for (const StatusIncident& incident : view.incidents) {
      if (incident.id == chart->first) {
        caption = fmt::format("Incident {} ({}), opened {}: ", incident.id, incident.klass,
                              FormatIsoUtc(incident.opened_at)) +
                  caption.substr(caption.find(':') + 2);
      }
    }
    page.images.push_back({caption, chart->second});
  }
  std::string status = StatusText(view);
  if (!chart) {
    status =
        "No chart: the monitor draws one when an incident of this job fires (gnuplot, "
        "[monitor] gnuplot), and it has none for this job.\n\n" +
        status;
  }
  page.sections.push_back({"Status", status});
  return page;
}

}  // namespace jobmon::cli
