#pragma once
// Base64 (RFC 4648, with padding, no line breaks) by libcrypto: a chart
// travels in an alert's JSON and inside a self-contained HTML report.

#include <optional>
#include <string>
#include <string_view>

namespace jobmon {

std::string Base64Encode(std::string_view bytes);
// nullopt when `text` is not base64 (whitespace is not allowed either).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace jobmon
