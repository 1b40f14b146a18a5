#include "queries.h"

#include <fmt/format.h>

namespace jobmon::diagnose::playbook {

std::vector<Series> Queries::Range(const std::string& promql, const TimeRange& range, double step) {
  auto answer = source_.QueryRange(promql, range, step);
  if (!answer) {
    result_.errors.push_back(fmt::format("{}: {}", promql, answer.error().message));
    return {};
  }
  return std::move(*answer);
}

std::vector<Series> Queries::Instant(const std::string& promql, double time) {
  auto answer = source_.QueryInstant(promql, time);
  if (!answer) {
    result_.errors.push_back(fmt::format("{}: {}", promql, answer.error().message));
    return {};
  }
  return std::move(*answer);
}

bool Wanted(const DiagnoseContext& context, std::string_view family) {
  return context.families.empty() || context.HasFamily(std::string(family));
}

}  // namespace jobmon::diagnose::playbook
