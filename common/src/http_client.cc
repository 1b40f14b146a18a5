#include "jobmon/common/http_client.h"

#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include "curl_library.h"

namespace jobmon {
namespace {

// One request's handle, its header list and its answer so far.
struct Transfer {
  Transfer() = default;
  Transfer(const Transfer&) = delete;  // owns libcurl handles
  Transfer& operator=(const Transfer&) = delete;

  const CurlLibrary* curl = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse response;
  bool too_big = false;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_mime* mime = nullptr;

  ~Transfer() {
    if (!curl) return;
    curl->mime_free(mime);
    curl->slist_free_all(headers);
    if (easy) curl->easy_cleanup(easy);
  }
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->response.body.size() + n > t->request->max_body) {
    t->too_big = true;
    return 0;  // aborts the transfer
  }
  t->response.body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * count);
  if (line.size() > 12 && strncasecmp(line.c_str(), "retry-after:", 12) == 0) {
    char* end = nullptr;
    double seconds = std::strtod(line.c_str() + 12, &end);
    if (end != line.c_str() + 12 && seconds >= 0) t->response.retry_after = seconds;
  }
  return size * count;
}

// The options every request gets; a POST's body on top. `reused`: an easy
// handle a finished request of the same batch left, its options reset.
void Prepare(const CurlLibrary& lib, Transfer& t, const HttpRequest& request, bool post,
             CURL* reused = nullptr) {
  t.curl = &lib;
  t.request = &request;
  if (reused) lib.easy_reset(reused);
  t.easy = reused ? reused : lib.easy_init();
  CURL* curl = t.easy;
  for (const std::string& header : request.headers)
    t.headers = lib.slist_append(t.headers, header.c_str());
  lib.easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  lib.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, request.protocols.c_str());
  lib.easy_setopt(curl, CURLOPT_NOPROXY, "*");
  lib.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // No DNS cache: scrape targets are literal IPs, and libcurl keeps an entry
  // per host:port (one per job's exporter) and prunes by walking every
  // entry at each connect: at 20,000 scrapes a cycle that walk was 60% of
  // the monitor's CPU (perf, monitor_bench at 10,000 jobs).
  lib.easy_setopt(curl, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
  lib.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_seconds * 1000));
  if (request.connect_timeout_seconds > 0) {
    lib.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                    static_cast<long>(request.connect_timeout_seconds * 1000));
  }
  if (!request.ca_file.empty()) lib.easy_setopt(curl, CURLOPT_CAINFO, request.ca_file.c_str());
  lib.easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  lib.easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  lib.easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  lib.easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  if (post) {
    if (!request.multipart.empty()) {
      t.mime = lib.mime_init(curl);
      for (const HttpPart& part : request.multipart) {
        curl_mimepart* field = lib.mime_addpart(t.mime);
        lib.mime_name(field, part.name.c_str());
        lib.mime_data(field, part.data.data(), part.data.size());
        if (!part.filename.empty()) lib.mime_filename(field, part.filename.c_str());
        if (!part.content_type.empty()) lib.mime_type(field, part.content_type.c_str());
      }
      lib.easy_setopt(curl, CURLOPT_MIMEPOST, t.mime);
    } else {
      t.headers = lib.slist_append(t.headers, ("Content-Type: " + request.content_type).c_str());
      lib.easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      lib.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                      static_cast<curl_off_t>(request.body.size()));
    }
    t.headers = lib.slist_append(t.headers, "Expect:");  // no 100-continue round trip
  }
  lib.easy_setopt(curl, CURLOPT_HTTPHEADER, t.headers);
  if (!request.basic_user.empty()) {
    lib.easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    lib.easy_setopt(curl, CURLOPT_USERNAME, request.basic_user.c_str());
    lib.easy_setopt(curl, CURLOPT_PASSWORD, request.basic_password.c_str());
  }
}

void Finish(Transfer& t, CURLcode rc) {
  if (rc != CURLE_OK) {
    t.response.error = t.too_big ? kHttpBodyTooLarge : t.curl->easy_strerror(rc);
  } else {
    t.curl->easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &t.response.status);
  }
}

}  // namespace

HttpResponse HttpPost(const HttpRequest& request) {
  std::string error;
  const CurlLibrary* lib = LoadCurl(&error);
  if (!lib) {
    HttpResponse failed;
    failed.error = error;
    return failed;
  }
  Transfer t;
  Prepare(*lib, t, request, /*post=*/true);
  Finish(t, lib->easy_perform(t.easy));
  return std::move(t.response);
}

std::vector<HttpResponse> HttpGetAll(const std::vector<HttpRequest>& requests,
                                     size_t max_parallel) {
  std::vector<HttpResponse> out(requests.size());
  if (requests.empty()) return out;
  std::string error;
  const CurlLibrary* lib = LoadCurl(&error);
  if (!lib) {
    for (auto& r : out) r.error = error;
    return out;
  }
  const size_t cap = max_parallel == 0 ? requests.size() : max_parallel;
  // Handles are made when admitted and freed when done, so no more than
  // `cap` sockets (and easy handles) exist at once, whatever the count.
  std::vector<std::unique_ptr<Transfer>> transfers(requests.size());
  // A finished request's easy handle goes to the next one (reset first):
  // making and freeing one per request (its structs and 16-KiB buffer) was
  // a tenth of a scraping monitor's cycle (docs/development.md).
  std::vector<CURL*> spare;
  CURLM* multi = lib->multi_init();
  // Finished connections wait in the multi's cache for reuse; bound it too,
  // or the cache would hold a socket per finished request.
  lib->multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(std::min<size_t>(cap, 1 << 20)));
  size_t next = 0, active = 0;
  auto admit = [&] {
    while (active < cap && next < requests.size()) {
      auto& t = transfers[next];
      t = std::make_unique<Transfer>();
      CURL* reused = nullptr;
      if (!spare.empty()) {
        reused = spare.back();
        spare.pop_back();
      }
      Prepare(*lib, *t, requests[next], /*post=*/false, reused);
      lib->easy_setopt(t->easy, CURLOPT_PRIVATE, reinterpret_cast<void*>(next));
      lib->multi_add_handle(multi, t->easy);
      ++next;
      ++active;
    }
  };
  auto retire = [&](size_t i, CURLcode rc) {
    Transfer& t = *transfers[i];
    Finish(t, rc);
    lib->multi_remove_handle(multi, t.easy);
    out[i] = std::move(t.response);
    spare.push_back(std::exchange(t.easy, nullptr));
    transfers[i].reset();
    --active;
  };
  admit();
  int running = 0;
  while (active > 0) {
    if (lib->multi_perform(multi, &running) != CURLM_OK) break;
    int queued = 0;
    while (CURLMsg* message = lib->multi_info_read(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      void* index_ptr = nullptr;
      lib->easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &index_ptr);
      retire(reinterpret_cast<size_t>(index_ptr), message->data.result);
    }
    admit();
    if (active > 0) lib->multi_poll(multi, nullptr, 0, 200, nullptr);
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (transfers[i]) {  // the multi handle failed under it
      lib->multi_remove_handle(multi, transfers[i]->easy);
      transfers[i].reset();
    }
    if (i >= next || (out[i].status == 0 && out[i].error.empty())) out[i].error = "no answer";
  }
  for (CURL* easy : spare) lib->easy_cleanup(easy);
  lib->multi_cleanup(multi);
  return out;
}

}  // namespace jobmon
