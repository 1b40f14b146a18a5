#include "jobmon/diagnose/diagnose_target.h"

namespace jobmon::diagnose {

void CancellablePromSource::ThrowIfCancelled() const {
  if (cancel_ && cancel_->load()) throw DiagnosisCancelled{};
}

Expected<std::vector<Series>> CancellablePromSource::QueryRange(std::string_view promql,
                                                                const TimeRange& range,
                                                                double step_seconds) {
  ThrowIfCancelled();
  return inner_.QueryRange(promql, range, step_seconds);
}

Expected<std::vector<Series>> CancellablePromSource::QueryInstant(std::string_view promql,
                                                                  double time) {
  ThrowIfCancelled();
  return inner_.QueryInstant(promql, time);
}

Expected<std::vector<std::string>> CancellablePromSource::LabelValues(
    std::string_view label, const std::optional<TimeRange>& range, std::string_view match) {
  ThrowIfCancelled();
  return inner_.LabelValues(label, range, match);
}

}  // namespace jobmon::diagnose
