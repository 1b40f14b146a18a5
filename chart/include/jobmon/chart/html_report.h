#pragma once
// A self-contained HTML report: one file with its charts inside (PNG as
// data: URIs) and its text escaped, no script, no request to anywhere (its
// Content-Security-Policy allows inline styles and data: images only), so
// it opens anywhere and a job's own log text in it is only text.

#include <string>
#include <vector>

namespace jobmon::chart {

struct HtmlImage {
  std::string caption;
  std::string png;  // the image's bytes
};

struct HtmlSection {
  std::string heading;
  std::string text;  // shown preformatted (reports are Markdown-like text)
};

struct HtmlPage {
  std::string title;
  std::string subtitle;  // one line under the title (state, class, times)
  std::vector<HtmlImage> images;
  std::vector<HtmlSection> sections;
};

std::string RenderHtml(const HtmlPage& page);

}  // namespace jobmon::chart
