#include "jobmon/common/http_url.h"

namespace jobmon {

bool IsHttpUrl(std::string_view url) {
  return url.starts_with("http://") || url.starts_with("https://");
}

bool UrlHasCredentials(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view rest = url.substr(scheme + 3);
  // The authority ends at the path, query or fragment (RFC 3986, 3.2).
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  return authority.find('@') != std::string_view::npos;
}

}  // namespace jobmon
