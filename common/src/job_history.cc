#include "jobmon/common/job_history.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "jobmon/common/http_url.h"

namespace jobmon::job_history {
namespace {

constexpr std::string_view kSelectorOpen = "{__name__=~\"", kSelectorClose = "\"}";

bool IsMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

Expected<double> Seconds(std::string_view text, const char* what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return Error{std::string(what) + " is not a number of seconds"};
  }
  return value;
}

std::string Number(double seconds) {
  char out[64];
  std::snprintf(out, sizeof out, "%.3f", seconds);
  return out;
}

}  // namespace

std::string FamilySelector(const std::vector<std::string>& families) {
  std::string names;
  for (const std::string& name : families) names += (names.empty() ? "" : "|") + name;
  return std::string(kSelectorOpen) + names + std::string(kSelectorClose);
}

Expected<Request> CheckRequest(std::string_view query, std::string_view start, std::string_view end,
                               std::string_view step) {
  if (!query.starts_with(kSelectorOpen) || !query.ends_with(kSelectorClose) ||
      query.size() < kSelectorOpen.size() + kSelectorClose.size()) {
    return Error{"only a selector of metric families is answered: {__name__=~\"a|b\"}"};
  }
  std::string_view names = query.substr(
      kSelectorOpen.size(), query.size() - kSelectorOpen.size() - kSelectorClose.size());
  Request request;
  while (true) {
    const size_t bar = names.find('|');
    const std::string_view name = names.substr(0, bar);
    if (!IsMetricName(name)) return Error{"not a metric name in the selector"};
    if (request.families.size() == kMaxFamilies) return Error{"too many families"};
    request.families.emplace_back(name);
    if (bar == std::string_view::npos) break;
    names.remove_prefix(bar + 1);
  }
  auto from = Seconds(start, "start");
  if (!from) return from.error();
  auto until = Seconds(end, "end");
  if (!until) return until.error();
  auto every = Seconds(step, "step");
  if (!every) return every.error();
  request.start = *from;
  request.end = *until;
  request.step = *every;
  if (request.step <= 0) return Error{"step must be positive"};
  if (request.end < request.start) return Error{"end is before start"};
  if (request.end - request.start > kMaxSeconds)
    return Error{"span longer than " + Number(kMaxSeconds) + " s"};
  if ((request.end - request.start) / request.step + 1 > kMaxPoints) {
    return Error{"more than " + std::to_string(static_cast<int>(kMaxPoints)) +
                 " points per series: a longer step is needed"};
  }
  return request;
}

std::string ForwardTarget(const Request& request) {
  return std::string(kPath) + "?query=" + UrlEncode(FamilySelector(request.families)) +
         "&start=" + Number(request.start) + "&end=" + Number(request.end) +
         "&step=" + Number(request.step);
}

}  // namespace jobmon::job_history
