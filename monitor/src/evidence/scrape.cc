#include "jobmon/monitor/scrape.h"

#include <sys/resource.h>

#include <algorithm>

#include "jobmon/common/http_client.h"

namespace jobmon::monitor {

std::string TargetAddress::ToString() const {
  const std::string text = ip.ToString();
  return (ip.family == IpAddress::Family::kV6 ? "[" + text + "]" : text) + ":" +
         std::to_string(port);
}

std::optional<TargetAddress> ParseTargetAddress(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) return std::nullopt;
  std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  if (port_text.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  auto ip = IpAddress::Parse(host);
  if (!ip) return std::nullopt;
  // An IPv6 address needs its brackets; an IPv4 one must not have them.
  if ((ip->family == IpAddress::Family::kV6) != bracketed) return std::nullopt;
  return TargetAddress{*ip, port};
}

std::vector<ScrapeResult> ScrapeAll(const std::vector<ScrapeTarget>& targets, double timeout,
                                    size_t max_body, size_t max_parallel) {
  std::vector<ScrapeResult> results(targets.size());
  std::vector<HttpRequest> requests;
  std::vector<size_t> requested;  // the target of each request
  for (size_t i = 0; i < targets.size(); ++i) {
    auto address = ParseTargetAddress(targets[i].address);
    if (!address) {
      results[i].error = "not a literal IP:port";
      continue;
    }
    HttpRequest request;
    request.url = "http://" + address->ToString() + "/metrics";
    request.protocols = "http";
    request.timeout_seconds = request.connect_timeout_seconds = timeout;
    request.max_body = max_body;
    requests.push_back(std::move(request));
    requested.push_back(i);
  }
  std::vector<HttpResponse> responses = HttpGetAll(requests, max_parallel);
  for (size_t k = 0; k < responses.size(); ++k) {
    ScrapeResult& r = results[requested[k]];
    HttpResponse& response = responses[k];
    if (!response.error.empty()) {
      r.error = response.error;
    } else if (response.status != 200) {
      r.error = "HTTP " + std::to_string(response.status);
    } else {
      r.ok = true;
      r.body = std::move(response.body);
    }
  }
  return results;
}

namespace {
// Descriptors kept for everything but scrapes: the database, logs, Slurm's
// pipes, the API and metrics sockets, the store's connection.
constexpr rlim_t kDescriptorsForTheRest = 256;
}  // namespace

FittedConcurrency FitScrapeConcurrency(int wanted, size_t wanted_logs) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return {wanted, -1, wanted_logs};
  const rlim_t needed = static_cast<rlim_t>(wanted) + wanted_logs + kDescriptorsForTheRest;
  if (limit.rlim_cur < needed) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? needed : std::min(needed, limit.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  const rlim_t room = limit.rlim_cur > 2 * kDescriptorsForTheRest
                          ? limit.rlim_cur - kDescriptorsForTheRest
                          : limit.rlim_cur / 2;
  const rlim_t scrapes = std::min(static_cast<rlim_t>(wanted), std::max<rlim_t>(room, 1));
  const rlim_t logs = room > scrapes ? std::min<rlim_t>(room - scrapes, wanted_logs) : 0;
  return {static_cast<int>(scrapes), static_cast<long>(limit.rlim_cur), static_cast<size_t>(logs)};
}

}  // namespace jobmon::monitor
