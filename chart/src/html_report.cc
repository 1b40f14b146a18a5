#include "jobmon/chart/html_report.h"

#include "jobmon/common/base64.h"
#include "jobmon/common/html_escape.h"

namespace jobmon::chart {

std::string RenderHtml(const HtmlPage& page) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
      "style-src 'unsafe-inline'\">\n"
      "<meta name=\"generator\" content=\"jobmon\">\n<title>" +
      EscapeHtml(page.title) +
      "</title>\n<style>\n"
      "body{font-family:'DejaVu Sans',sans-serif;margin:24px;color:#1a1a1a;background:#fff}\n"
      "h1{font-size:22px;margin:0 0 4px}\n.sub{color:#555;margin:0 0 16px}\n"
      "figure{margin:0 0 20px}\nfigure img{max-width:100%;border:1px solid #ccc}\n"
      "figcaption{color:#555;font-size:13px}\n"
      "h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:2px}\n"
      "pre{background:#f6f6f6;padding:10px;overflow-x:auto;white-space:pre-wrap;font-size:12px}\n"
      "</style>\n</head>\n<body>\n<h1>" +
      EscapeHtml(page.title) + "</h1>\n";
  if (!page.subtitle.empty()) html += "<p class=\"sub\">" + EscapeHtml(page.subtitle) + "</p>\n";
  for (const HtmlImage& image : page.images) {
    html += "<figure><img alt=\"" + EscapeHtml(image.caption) + "\" src=\"data:image/png;base64," +
            Base64Encode(image.png) + "\"><figcaption>" + EscapeHtml(image.caption) +
            "</figcaption></figure>\n";
  }
  for (const HtmlSection& section : page.sections) {
    html += "<section><h2>" + EscapeHtml(section.heading) + "</h2>\n<pre>" +
            EscapeHtml(section.text) + "</pre></section>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace jobmon::chart
