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

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace jobmon
