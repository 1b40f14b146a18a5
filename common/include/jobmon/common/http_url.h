#pragma once
// What a URL in jobmon's configuration may be: http or https, without
// credentials in its authority ("https://user:password@host/").
// Configuration files are readable by every user (jobmon.toml,
// plugstack.conf) and URLs are copied into manifests, logs and reports:
// credentials go in secret files instead. The one test the plugin, the
// monitor, the CLI and the alert receivers share.

#include <string_view>

namespace jobmon {

// "http://..." or "https://...".
bool IsHttpUrl(std::string_view url);

bool UrlHasCredentials(std::string_view url);

}  // namespace jobmon
