#include "jobmon/monitor/history_backfill.h"

#include <algorithm>
#include <cmath>

#include "jobmon/common/job_history.h"
#include "jobmon/common/store_labels.h"
#include "jobmon/diagnose/prom_http.h"

namespace jobmon::monitor {

std::vector<std::string> HistoryFamilies() {
  std::vector<std::string> families = {"up"};
  const std::vector<std::string>& window = WindowInputNames();
  families.insert(families.end(), window.begin(), window.end());
  return families;
}

double HistoryStep(double span_seconds) {
  constexpr double kPoints = 720;
  return std::max(1.0, std::ceil(span_seconds / kPoints));
}

std::map<std::string, std::vector<StoreScrape>> JobHistoryScrapes(
    uint32_t job_id, std::vector<diagnose::Series> series, const std::set<std::string>& hosts,
    const WindowLimits& limits) {
  for (diagnose::Series& s : series) s.labels[store_labels::kJobId] = std::to_string(job_id);
  StoreScopes scopes;
  scopes[job_id].hosts = hosts;
  StoreScrapes grouped = GroupStoreSeries(series, limits, &scopes);
  auto job = grouped.find(job_id);
  if (job == grouped.end()) return {};
  return std::move(job->second);
}

Expected<std::map<std::string, std::vector<StoreScrape>>> FetchJobHistory(
    const std::string& exporter_address, uint32_t job_id, const std::set<std::string>& hosts,
    double from, double until, double timeout_seconds) {
  diagnose::PromHttpOptions options;
  options.timeout_seconds = timeout_seconds;
  options.connect_timeout_seconds = timeout_seconds;
  options.max_body = job_history::kMaxAnswerBytes;
  diagnose::PromHttpSource exporter("http://" + exporter_address, options);
  auto series = exporter.QueryRange(job_history::FamilySelector(HistoryFamilies()), {from, until},
                                    HistoryStep(until - from));
  if (!series)
    return Error{"the job's history from " + exporter_address + ": " + series.error().message};
  return JobHistoryScrapes(job_id, std::move(series).value(), hosts);
}

}  // namespace jobmon::monitor
