#include "jobmon/monitor/scrape.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

namespace jobmon::monitor {

Expected<std::vector<ScrapeTarget>> ParseFileSdTargets(std::string_view text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_array()) return Error{"file_sd: not a JSON array"};
  std::vector<ScrapeTarget> out;
  for (const auto& group : json) {
    if (!group.is_object() || !group.contains("targets") || !group["targets"].is_array()) continue;
    std::string host;
    if (group.contains("labels") && group["labels"].is_object()) {
      const auto& labels = group["labels"];
      if (labels.contains("host") && labels["host"].is_string()) host = labels["host"];
    }
    for (const auto& target : group["targets"]) {
      if (!target.is_string()) continue;
      std::string address = target;
      out.push_back({host.empty() ? address : host, address});
    }
  }
  return out;
}

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

namespace {

struct Transfer {
  std::string body;
  size_t max_body = 0;
  bool too_big = false;
};

size_t OnData(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  if (t->body.size() + n > t->max_body) {
    t->too_big = true;
    return 0;  // aborts the transfer
  }
  t->body.append(data, n);
  return n;
}

}  // namespace

std::vector<ScrapeResult> ScrapeAll(const std::vector<ScrapeTarget>& targets, double timeout,
                                    size_t max_body) {
  std::vector<ScrapeResult> results(targets.size());
  if (targets.empty()) return results;
  static const bool initialized = curl_global_init(CURL_GLOBAL_DEFAULT) == 0;
  if (!initialized) {
    for (auto& r : results) r.error = "libcurl did not initialize";
    return results;
  }
  CURLM* multi = curl_multi_init();
  std::vector<CURL*> easies(targets.size(), nullptr);
  std::vector<Transfer> transfers(targets.size());
  const long timeout_ms = static_cast<long>(timeout * 1000);
  for (size_t i = 0; i < targets.size(); ++i) {
    auto address = ParseTargetAddress(targets[i].address);
    if (!address) {
      results[i].error = "not a literal IP:port";
      continue;
    }
    CURL* easy = curl_easy_init();
    easies[i] = easy;
    transfers[i].max_body = max_body;
    const std::string url = "http://" + address->ToString() + "/metrics";
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");  // private addresses: never via a proxy
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnData);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfers[i]);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, reinterpret_cast<void*>(i));
    curl_multi_add_handle(multi, easy);
  }
  int running = 0;
  do {
    if (curl_multi_perform(multi, &running) != CURLM_OK) break;
    if (running > 0) curl_multi_poll(multi, nullptr, 0, 200, nullptr);
  } while (running > 0);
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    void* index_ptr = nullptr;
    curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &index_ptr);
    size_t i = reinterpret_cast<size_t>(index_ptr);
    ScrapeResult& r = results[i];
    long status = 0;
    curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
    if (message->data.result != CURLE_OK) {
      r.error = transfers[i].too_big ? "response larger than the limit"
                                     : curl_easy_strerror(message->data.result);
    } else if (status != 200) {
      r.error = "HTTP " + std::to_string(status);
    } else {
      r.ok = true;
      r.body = std::move(transfers[i].body);
    }
  }
  for (CURL* easy : easies) {
    if (!easy) continue;
    curl_multi_remove_handle(multi, easy);
    curl_easy_cleanup(easy);
  }
  curl_multi_cleanup(multi);
  for (auto& r : results) {
    if (!r.ok && r.error.empty()) r.error = "no answer";
  }
  return results;
}

}  // namespace jobmon::monitor
