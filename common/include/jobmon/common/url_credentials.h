#pragma once
// Whether an http(s) URL carries credentials in its authority
// ("https://user:password@host/"). Configuration files are readable by
// every user (jobmon.toml, plugstack.conf) and URLs are copied into
// manifests, logs and reports: credentials go in secret files instead. The
// one test the plugin, the monitor and the alert receivers share.

#include <string_view>

namespace jobmon {

bool UrlHasCredentials(std::string_view url);

}  // namespace jobmon
