#include "curl_library.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <type_traits>

namespace jobmon {
namespace {

struct Loaded {
  CurlLibrary library{};
  std::string error;  // empty where it loaded
};

Loaded Load(const char* soname) {
  Loaded out;
  // Never unloaded: its handles may live as long as the process.
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    out.error = std::string("cannot load ") + soname +
                " (Debian: apt-get install libcurl4): " + (why ? why : "unknown");
    return out;
  }
  bool all = true;
  auto bind = [&](auto& entry, const char* name) {
    void* symbol = dlsym(handle, name);
    if (!symbol && all) {
      all = false;
      out.error = std::string(soname) + " lacks " + name + " (libcurl 7.66 or later is needed)";
    }
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(symbol);
  };
  CurlLibrary& c = out.library;
  bind(c.global_init, "curl_global_init");
  bind(c.easy_init, "curl_easy_init");
  bind(c.easy_reset, "curl_easy_reset");
  bind(c.easy_setopt, "curl_easy_setopt");
  bind(c.easy_getinfo, "curl_easy_getinfo");
  bind(c.easy_perform, "curl_easy_perform");
  bind(c.easy_strerror, "curl_easy_strerror");
  bind(c.easy_cleanup, "curl_easy_cleanup");
  bind(c.slist_append, "curl_slist_append");
  bind(c.slist_free_all, "curl_slist_free_all");
  bind(c.mime_init, "curl_mime_init");
  bind(c.mime_addpart, "curl_mime_addpart");
  bind(c.mime_name, "curl_mime_name");
  bind(c.mime_data, "curl_mime_data");
  bind(c.mime_filename, "curl_mime_filename");
  bind(c.mime_type, "curl_mime_type");
  bind(c.mime_free, "curl_mime_free");
  bind(c.multi_init, "curl_multi_init");
  bind(c.multi_setopt, "curl_multi_setopt");
  bind(c.multi_add_handle, "curl_multi_add_handle");
  bind(c.multi_remove_handle, "curl_multi_remove_handle");
  bind(c.multi_perform, "curl_multi_perform");
  bind(c.multi_info_read, "curl_multi_info_read");
  bind(c.multi_poll, "curl_multi_poll");
  bind(c.multi_cleanup, "curl_multi_cleanup");
  if (!all) return out;
  if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) out.error = "libcurl did not initialize";
  return out;
}

}  // namespace

const CurlLibrary* LoadCurl(std::string* error, const char* soname) {
  static std::mutex loading;
  static std::map<std::string, Loaded> loaded;
  std::lock_guard lock(loading);
  auto it = loaded.find(soname);
  if (it == loaded.end()) it = loaded.emplace(soname, Load(soname)).first;
  if (!it->second.error.empty()) {
    if (error) *error = it->second.error;
    return nullptr;
  }
  return &it->second.library;
}

}  // namespace jobmon
