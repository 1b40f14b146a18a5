#pragma once
// One HTTP request with libcurl, for the receivers: JSON or form bodies,
// multipart uploads (Telegram's sendDocument), basic auth, extra headers,
// a deadline. No proxy from the environment: receivers are named by URL.

#include <optional>
#include <string>
#include <vector>

namespace jobmon::alerts {

struct HttpPart {
  std::string name, data;
  std::string filename;      // set: a file upload
  std::string content_type;  // empty: text/plain for fields
};

struct HttpRequest {
  std::string url;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::string> headers;  // "Name: value"
  std::vector<HttpPart> multipart;   // non-empty: multipart/form-data instead of body
  std::string basic_user, basic_password;
  double timeout_seconds = 10;
};

struct HttpResponse {
  long status = 0;  // 0: no HTTP answer (see error)
  std::string body;
  std::string error;
  std::optional<double> retry_after;  // Retry-After header, seconds
};

HttpResponse HttpPost(const HttpRequest& request);

}  // namespace jobmon::alerts
