#pragma once
// What a URL in jobmon's configuration may be: http or https, without
// credentials in its authority ("https://user:password@host/").
// Configuration files are readable by every user (jobmon.toml,
// plugstack.conf) and URLs are copied into manifests, logs and reports:
// credentials go in secret files instead. The one test the plugin, the
// monitor, the CLI and the alert receivers share.

#include <string>
#include <string_view>

namespace jobmon {

// "http://..." or "https://...".
bool IsHttpUrl(std::string_view url);

bool UrlHasCredentials(std::string_view url);

// Percent-encodes everything but RFC 3986's unreserved characters, so
// PromQL's brackets, braces, quotes, '+', '&' and '=' survive a query string.
std::string UrlEncode(std::string_view text);

}  // namespace jobmon
