#pragma once
// HTTP with libcurl, for the alert receivers (POST: JSON, forms, Telegram's
// multipart uploads) and the monitor's scrapes (GET, many at once). What
// both rely on lives here: a deadline per request, a cap on the answer, the
// allowed protocols, no proxy from the environment (targets are named by
// URL, scrape targets are private addresses), no signals. Nothing here logs:
// URLs and headers may hold secrets (a bot token, a bearer token), and
// errors are libcurl's messages, which name neither. Which targets may be
// fetched at all is the caller's decision (the monitor's scrape checks).
// A library apart from jobmon::common, which the SPANK plugin links.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace jobmon {

struct HttpPart {
  std::string name, data;
  std::string filename;      // set: a file upload
  std::string content_type;  // empty: text/plain for fields
};

struct HttpRequest {
  std::string url;
  std::string body;  // POST
  std::string content_type = "application/json";
  std::vector<std::string> headers;  // "Name: value"
  std::vector<HttpPart> multipart;   // non-empty: multipart/form-data instead of body
  std::string basic_user, basic_password;
  double timeout_seconds = 10;           // the whole request
  double connect_timeout_seconds = 0;    // 0: only the whole request's deadline
  size_t max_body = size_t{1} << 20;     // a longer answer fails the request
  std::string protocols = "http,https";  // libcurl's CURLOPT_PROTOCOLS_STR
  std::string ca_file;                   // TLS: trust these CAs instead of the system's
};

struct HttpResponse {
  long status = 0;  // 0: no HTTP answer (see error)
  std::string body;
  std::string error;                  // empty when an HTTP answer came, whatever its status
  std::optional<double> retry_after;  // Retry-After header, seconds
};

inline constexpr const char* kHttpBodyTooLarge = "response larger than the limit";

HttpResponse HttpPost(const HttpRequest& request);
// GET every request concurrently (libcurl multi): a dead host costs one
// timeout, not one per request. At most `max_parallel` at once (0: all),
// the next started as one finishes: a cap on open sockets, so thousands of
// targets need no thousands of file descriptors. Answers in the requests'
// order.
std::vector<HttpResponse> HttpGetAll(const std::vector<HttpRequest>& requests,
                                     size_t max_parallel = 0);

}  // namespace jobmon
