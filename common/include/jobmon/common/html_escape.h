#pragma once
// Text into HTML: & < > " ' as entities, and back. The one escaper for Telegram's
// HTML messages (which accept exactly these named and numeric entities)
// and the HTML reports (chart/html_report.h), in text and attributes.

#include <string>
#include <string_view>

namespace jobmon {

std::string EscapeHtml(std::string_view text);
// The inverse of EscapeHtml: the five entities it writes back to their
// characters; any other text (other entities among it) as it is.
std::string UnescapeHtml(std::string_view html);

}  // namespace jobmon
