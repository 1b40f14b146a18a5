#pragma once
// Text into HTML: & < > " ' as entities. The one escaper for Telegram's
// HTML messages (which accept exactly these named and numeric entities)
// and the HTML reports (chart/html_report.h), in text and attributes.

#include <string>
#include <string_view>

namespace jobmon {

std::string EscapeHtml(std::string_view text);

}  // namespace jobmon
