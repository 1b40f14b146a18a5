#pragma once
// PromSource over Prometheus's HTTP API (a job's live Prometheus on
// loopback or through an ssh tunnel, a read-only instance over an archive,
// a URL given with --prometheus), through common/http_client (libcurl).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

struct PromHttpOptions {
  double timeout_seconds = 120;  // a long range query over many series is slow
  double connect_timeout_seconds = 5;
  size_t max_body = size_t{256} << 20;  // big range queries answer in many MB
  std::string description;              // for Describe(); empty: the URL
  // Sent with every request ("Authorization: Bearer ..." for a central
  // store); never logged, never in an error or a report.
  std::vector<std::string> headers;
  // A central store's credentials (the monitor's store mode): sent with
  // every request, never put in a message.
  std::string bearer_token;
  std::string basic_user, basic_password;
  // Appended to every query string ("nocache=1": VictoriaMetrics then
  // answers from the newest samples instead of its response cache).
  std::string extra_query;
};

class PromHttpSource : public PromSource {
 public:
  // base_url: "http://127.0.0.1:9190" (a trailing '/' is ignored).
  explicit PromHttpSource(std::string base_url, PromHttpOptions options = {});

  Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                           double step_seconds) override;
  Expected<std::vector<Series>> QueryInstant(std::string_view promql, double time) override;
  Expected<std::vector<std::string>> LabelValues(
      std::string_view label, const std::optional<TimeRange>& range = std::nullopt,
      std::string_view match = {}) override;
  std::string Describe() const override;

  // GET base_url + path_and_query; the body of a 2xx, 4xx or 5xx answer
  // (Prometheus explains errors in JSON), or the transport's error.
  Expected<std::string> Get(const std::string& path_and_query) const;
  const std::string& base_url() const { return base_url_; }

 private:
  std::string base_url_;
  PromHttpOptions options_;
};

}  // namespace jobmon::diagnose
