#include "jobmon/diagnose/prom_http.h"

#include <fmt/format.h>

#include "jobmon/common/http_client.h"
#include "jobmon/common/http_url.h"
#include "jobmon/diagnose/prom_json.h"

namespace jobmon::diagnose {

namespace {

std::string Seconds(double t) { return fmt::format("{:.3f}", t); }

}  // namespace

PromHttpSource::PromHttpSource(std::string base_url, PromHttpOptions options)
    : base_url_(std::move(base_url)), options_(std::move(options)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

Expected<std::string> PromHttpSource::Get(const std::string& path_and_query) const {
  HttpRequest request;
  request.url = base_url_ + path_and_query;
  request.timeout_seconds = options_.timeout_seconds;
  request.connect_timeout_seconds = options_.connect_timeout_seconds;
  request.max_body = options_.max_body;
  request.headers = options_.headers;
  if (!options_.extra_query.empty()) {
    request.url +=
        (path_and_query.find('?') == std::string::npos ? "?" : "&") + options_.extra_query;
  }
  if (!options_.bearer_token.empty())
    request.headers.push_back("Authorization: Bearer " + options_.bearer_token);
  request.basic_user = options_.basic_user;
  request.basic_password = options_.basic_password;
  auto answers = HttpGetAll({request});
  HttpResponse& answer = answers.at(0);
  // The URL (not the query, which may be long) names where it failed.
  if (answer.status == 0) return Error{fmt::format("{}: {}", base_url_, answer.error)};
  // Prometheus answers 400/422/503 with a JSON error the parsers report;
  // anything else that is not JSON (a proxy's page) is named by its status.
  if (answer.status != 200 && (answer.body.empty() || answer.body.front() != '{'))
    return Error{fmt::format("{}: HTTP {}", base_url_, answer.status)};
  return std::move(answer.body);
}

Expected<std::vector<Series>> PromHttpSource::QueryRange(std::string_view promql,
                                                         const TimeRange& range,
                                                         double step_seconds) {
  auto body =
      Get(fmt::format("/api/v1/query_range?query={}&start={}&end={}&step={}", UrlEncode(promql),
                      Seconds(range.start), Seconds(range.end), Seconds(step_seconds)));
  if (!body) return body.error();
  return ParseQueryResponse(*body);
}

Expected<std::vector<Series>> PromHttpSource::QueryInstant(std::string_view promql, double time) {
  auto body = Get(fmt::format("/api/v1/query?query={}&time={}", UrlEncode(promql), Seconds(time)));
  if (!body) return body.error();
  return ParseQueryResponse(*body);
}

Expected<std::vector<std::string>> PromHttpSource::LabelValues(
    std::string_view label, const std::optional<TimeRange>& range, std::string_view match) {
  std::string path = fmt::format("/api/v1/label/{}/values", UrlEncode(label));
  char separator = '?';
  if (range) {
    path += fmt::format("?start={}&end={}", Seconds(range->start), Seconds(range->end));
    separator = '&';
  }
  if (!match.empty()) path += fmt::format("{}match[]={}", separator, UrlEncode(match));
  auto body = Get(path);
  if (!body) return body.error();
  return ParseLabelValues(*body);
}

std::string PromHttpSource::Describe() const {
  return options_.description.empty() ? base_url_ : options_.description;
}

}  // namespace jobmon::diagnose
