#include "jobmon/common/store_labels.h"

namespace jobmon::store_labels {

std::string PromQlString(std::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Matcher(std::string_view label, std::string_view value) {
  return std::string(label) + "=" + PromQlString(value);
}

std::string RegexLiteral(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(R"(\.+*?()|[]{}^$)").find(c) != std::string_view::npos) out += "\\\\";
    out += c;
  }
  return out;
}

}  // namespace jobmon::store_labels
