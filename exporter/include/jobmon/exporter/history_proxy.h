#pragma once
// The head node's exporter answers one shape of range query for its job's
// Prometheus, which listens on loopback only: a daemon restarted while the
// job trained, in scrape mode, takes the job's past evidence from it
// (common/include/jobmon/common/job_history.h, the contract). The request
// is checked and rebuilt before it is forwarded; one at a time, so a
// caller cannot hold every worker or load the job's Prometheus.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/common/http_client.h"
#include "jobmon/common/metrics_server.h"
#include "jobmon/common/socket_address.h"

namespace jobmon::exporter {

class HistoryProxy {
 public:
  using Fetch = std::function<HttpResponse(const HttpRequest&)>;
  // `prometheus`: the job's Prometheus, a loopback address (else an error:
  // nothing is forwarded off the node). `fetch`: tests stand in for libcurl.
  static Expected<HistoryProxy> Make(const SocketAddress& prometheus, Fetch fetch = {});

  // The decoded query-string parameters of one request to job_history::kPath.
  // 400 with Prometheus's error shape for a request outside the contract,
  // 503 while another is forwarded, 502 when the job's Prometheus did not
  // answer; otherwise its answer as it came (status and body), as JSON.
  HttpAnswer Answer(std::string_view query, std::string_view start, std::string_view end,
                    std::string_view step) const;
  // Answers job_history::kPath on `server` (GET only; 405 otherwise) with a
  // copy of this proxy.
  void ServeOn(MetricsServer& server) const;

 private:
  HistoryProxy(std::string base_url, Fetch fetch)
      : base_url_(std::move(base_url)), fetch_(std::move(fetch)) {}
  std::string base_url_;
  Fetch fetch_;
  // Held while one request is forwarded; shared by copies of the proxy.
  std::shared_ptr<std::mutex> busy_ = std::make_shared<std::mutex>();
};

}  // namespace jobmon::exporter
