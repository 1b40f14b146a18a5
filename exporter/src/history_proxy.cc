#include "jobmon/exporter/history_proxy.h"

#include <nlohmann/json.hpp>

#include "jobmon/common/job_history.h"

namespace jobmon::exporter {
namespace {

HttpAnswer Json(int status, std::string body) {
  return HttpAnswer{status, "application/json", std::move(body)};
}

// Prometheus's own error shape, which the daemon's client reads.
HttpAnswer Failure(int status, const std::string& error_type, const std::string& message) {
  return Json(
      status,
      nlohmann::json{{"status", "error"}, {"errorType", error_type}, {"error", message}}.dump());
}

HttpResponse GetOne(const HttpRequest& request) { return HttpGetAll({request}).front(); }

}  // namespace

Expected<HistoryProxy> HistoryProxy::Make(const SocketAddress& prometheus, Fetch fetch) {
  if (!prometheus.address.IsLoopback()) {
    return Error{"the job's Prometheus must be on loopback, not " + prometheus.ToBindString()};
  }
  return HistoryProxy("http://" + prometheus.ToBindString(), fetch ? std::move(fetch) : GetOne);
}

HttpAnswer HistoryProxy::Answer(std::string_view query, std::string_view start,
                                std::string_view end, std::string_view step) const {
  auto request = job_history::CheckRequest(query, start, end, step);
  if (!request) return Failure(400, "bad_data", request.error().message);
  std::unique_lock<std::mutex> one_at_a_time(*busy_, std::try_to_lock);
  if (!one_at_a_time.owns_lock()) {
    return Failure(503, "unavailable", "another history request is being answered");
  }
  HttpRequest forward;
  forward.url = base_url_ + job_history::ForwardTarget(*request);
  forward.timeout_seconds = 10;
  forward.connect_timeout_seconds = 2;
  forward.max_body = job_history::kMaxAnswerBytes;
  forward.protocols = "http";
  HttpResponse response = fetch_(forward);
  if (response.status == 0) {
    return Failure(502, "unavailable", "the job's Prometheus did not answer: " + response.error);
  }
  return Json(static_cast<int>(response.status), std::move(response.body));
}

void HistoryProxy::ServeOn(MetricsServer& server) const {
  server.AddRoute(job_history::kPath, [proxy =
                                           *this](const MetricsServer::QueryArgument& argument) {
    return proxy.Answer(argument("query"), argument("start"), argument("end"), argument("step"));
  });
}

}  // namespace jobmon::exporter
