#pragma once
// libcurl's entry points, from libcurl.so.4 loaded at the first request
// rather than at the start of every program that links the HTTP client:
// libcurl brings 30-odd libraries (TLS, Kerberos, LDAP, SSH, IDN), and
// mapping them was 14 ms of every jobmon command's start, half of a small
// log's `jobmon triage` (docs/development.md, "The last figures"). Private to
// the HTTP client (http_client.cc).

#include <curl/curl.h>

#include <string>

namespace jobmon {

struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_mime_init) mime_init;
  decltype(&::curl_mime_addpart) mime_addpart;
  decltype(&::curl_mime_name) mime_name;
  decltype(&::curl_mime_data) mime_data;
  decltype(&::curl_mime_filename) mime_filename;
  decltype(&::curl_mime_type) mime_type;
  decltype(&::curl_mime_free) mime_free;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_cleanup) multi_cleanup;
};

// The library named `soname`, loaded and initialised (curl_global_init)
// once per name; nullptr, with `error` saying why, where it cannot be.
// Thread-safe.
const CurlLibrary* LoadCurl(std::string* error, const char* soname = "libcurl.so.4");

}  // namespace jobmon
