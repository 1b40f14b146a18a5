#include "jobmon/common/html_escape.h"

#include <utility>

namespace jobmon {

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string UnescapeHtml(std::string_view html) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  out.reserve(html.size());
  for (size_t i = 0; i < html.size();) {
    bool replaced = false;
    if (html[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (html.compare(i, entity.size(), entity) == 0) {
          out += c;
          i += entity.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += html[i++];
  }
  return out;
}

}  // namespace jobmon
