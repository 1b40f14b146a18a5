#include "jobmon/common/terminal_text.h"

#include "jobmon/common/valid_utf8.h"

namespace jobmon {
namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

std::string Replaced(std::string_view text, bool keep_newlines) {
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto byte = static_cast<unsigned char>(valid[i]);
    const bool kept = byte == '\t' || (keep_newlines && byte == '\n');
    if ((byte < 0x20 && !kept) || byte == 0x7f) {
      out += kReplacement;
    } else if (byte == 0xc2 && i + 1 < valid.size() &&
               static_cast<unsigned char>(valid[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(valid[i + 1]) <= 0x9f) {
      // U+0080..U+009F, the C1 controls (CSI is U+009B), in valid UTF-8.
      out += kReplacement;
      ++i;
    } else {
      out.push_back(valid[i]);
    }
  }
  return out;
}

}  // namespace

std::string TerminalText(std::string_view text) { return Replaced(text, false); }

std::string TerminalLines(std::string_view text) { return Replaced(text, true); }

}  // namespace jobmon
