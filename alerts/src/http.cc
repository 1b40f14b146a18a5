#include "jobmon/alerts/http.h"

#include <curl/curl.h>
#include <strings.h>

#include <cstdlib>

namespace jobmon::alerts {
namespace {

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() > (1 << 20)) return 0;  // a receiver's answer is small
  body->append(data, size * count);
  return size * count;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* response = static_cast<HttpResponse*>(user);
  std::string line(data, size * count);
  if (line.size() > 12 && strncasecmp(line.c_str(), "retry-after:", 12) == 0) {
    char* end = nullptr;
    double seconds = std::strtod(line.c_str() + 12, &end);
    if (end != line.c_str() + 12 && seconds >= 0) response->retry_after = seconds;
  }
  return size * count;
}

}  // namespace

HttpResponse HttpPost(const HttpRequest& request) {
  static const bool initialized = curl_global_init(CURL_GLOBAL_DEFAULT) == 0;
  HttpResponse response;
  if (!initialized) {
    response.error = "libcurl did not initialize";
    return response;
  }
  CURL* curl = curl_easy_init();
  curl_slist* headers = nullptr;
  curl_mime* mime = nullptr;
  for (const std::string& header : request.headers)
    headers = curl_slist_append(headers, header.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
  if (!request.multipart.empty()) {
    mime = curl_mime_init(curl);
    for (const HttpPart& part : request.multipart) {
      curl_mimepart* field = curl_mime_addpart(mime);
      curl_mime_name(field, part.name.c_str());
      curl_mime_data(field, part.data.data(), part.data.size());
      if (!part.filename.empty()) curl_mime_filename(field, part.filename.c_str());
      if (!part.content_type.empty()) curl_mime_type(field, part.content_type.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
  } else {
    headers = curl_slist_append(headers, ("Content-Type: " + request.content_type).c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (!request.basic_user.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, request.basic_user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, request.basic_password.c_str());
  }
  CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    response.error = curl_easy_strerror(rc);
  } else {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  }
  curl_mime_free(mime);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

}  // namespace jobmon::alerts
