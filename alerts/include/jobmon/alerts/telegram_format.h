#pragma once
// Telegram messages for an alert (Bot API, parse_mode=HTML): the escaping
// the API demands (&, <, > as entities: common/html_escape.h) and messages no longer than
// kTelegramMaxText characters after entity parsing, split at line
// boundaries so every message is valid HTML on its own. Pure.

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/alerts/alert.h"

namespace jobmon::alerts {

inline constexpr size_t kTelegramMaxText = 4096;

// Characters (UTF-16 code units, as Telegram counts) of the text the HTML shows.
size_t VisibleLength(std::string_view html);
// One or more messages; each line of HTML is self-contained (tags closed
// on the line), and a line too long on its own is cut with "…".
std::vector<std::string> SplitHtmlLines(const std::vector<std::string>& lines,
                                        size_t limit = kTelegramMaxText);
std::vector<std::string> FormatTelegramMessages(const Alert& alert,
                                                size_t limit = kTelegramMaxText);

}  // namespace jobmon::alerts
