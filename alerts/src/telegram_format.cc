#include "jobmon/alerts/telegram_format.h"

#include <fmt/format.h>

#include "jobmon/common/html_escape.h"
#include "jobmon/common/text_lines.h"

namespace jobmon::alerts {
namespace {

// UTF-16 code units of one UTF-8 sequence starting with `lead`.
size_t Utf16Units(unsigned char lead) { return lead >= 0xF0 ? 2 : 1; }

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Plain text cut to at most `limit` visible characters, at a UTF-8 boundary.
std::string CutPlain(std::string_view text, size_t limit) {
  size_t units = 0, i = 0;
  while (i < text.size()) {
    size_t add = Utf16Units(static_cast<unsigned char>(text[i]));
    if (units + add > limit) break;
    units += add;
    ++i;
    while (i < text.size() && IsContinuation(static_cast<unsigned char>(text[i]))) ++i;
  }
  return std::string(text.substr(0, i));
}

std::string Line(std::string_view label, std::string_view value_html) {
  return fmt::format("<b>{}</b> {}", label, value_html);
}

}  // namespace

size_t VisibleLength(std::string_view html) {
  size_t units = 0;
  for (size_t i = 0; i < html.size();) {
    unsigned char c = static_cast<unsigned char>(html[i]);
    if (c == '<') {
      size_t close = html.find('>', i);
      i = close == std::string_view::npos ? html.size() : close + 1;
      continue;
    }
    if (c == '&') {
      size_t semi = html.find(';', i);
      if (semi != std::string_view::npos && semi - i <= 8) {
        ++units;
        i = semi + 1;
        continue;
      }
    }
    units += Utf16Units(c);
    ++i;
    while (i < html.size() && IsContinuation(static_cast<unsigned char>(html[i]))) ++i;
  }
  return units;
}

std::vector<std::string> SplitHtmlLines(const std::vector<std::string>& lines, size_t limit) {
  std::vector<std::string> messages;
  std::string current;
  size_t current_length = 0;
  for (std::string line : lines) {
    size_t length = VisibleLength(line);
    if (length > limit) {
      // Only plain lines get this long (evidence); tagged lines are short.
      std::string untagged;
      for (size_t i = 0; i < line.size();) {  // back to text, then cut and escape again
        if (line[i] == '<') {
          size_t close = line.find('>', i);
          i = close == std::string::npos ? line.size() : close + 1;
        } else {
          untagged += line[i++];
        }
      }
      line = EscapeHtml(CutPlain(UnescapeHtml(untagged), limit - 1)) + "…";
      length = VisibleLength(line);
    }
    if (current.empty()) {
      current = line;
      current_length = length;
    } else if (current_length + 1 + length > limit) {
      messages.push_back(current);
      current = line;
      current_length = length;
    } else {
      current += "\n" + line;
      current_length += 1 + length;
    }
  }
  if (!current.empty()) messages.push_back(current);
  return messages;
}

std::vector<std::string> FormatTelegramMessages(const Alert& a, size_t limit) {
  const bool firing = a.status == "firing";
  const bool recovery = !a.recovery.empty();
  const bool follow_up = !a.diagnosis.empty() || recovery;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("<b>{} {}</b> <code>{}</code>",
                              recovery    ? "🛠 RECOVERY"
                              : follow_up ? "🩺 DIAGNOSIS"
                              : firing    ? "🔴 FIRING"
                                          : "✅ RESOLVED",
                              EscapeHtml(Title(a)), EscapeHtml(a.klass)));
  lines.push_back(recovery ? Line("Done:", EscapeHtml(a.recovery)) : EscapeHtml(a.summary));
  if (!a.diagnosis.empty()) {
    lines.push_back("<b>Diagnosis:</b>");
    for (std::string_view line : TextLines(a.diagnosis)) {
      if (!line.empty()) lines.push_back("• " + EscapeHtml(line));
    }
  }
  if (!firing && !a.close_reason.empty())
    lines.push_back(Line("Closed:", EscapeHtml(a.close_reason)));
  if (!a.hosts.empty()) {
    std::string hosts;
    for (const auto& h : a.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    lines.push_back(Line("Hosts:", EscapeHtml(hosts)));
  }
  lines.push_back(Line("Cluster:", EscapeHtml(a.cluster)) + " " +
                  Line("User:", EscapeHtml(a.user.empty() ? "-" : a.user)) + " " +
                  Line("Severity:", EscapeHtml(Severity(a.klass))));
  if (firing && !follow_up && !a.evidence.empty()) {
    lines.push_back("<b>Evidence:</b>");
    for (const auto& e : a.evidence) lines.push_back("• " + EscapeHtml(e));
  }
  if (!a.tunnel_command.empty()) {
    lines.push_back(Line("Tunnel:", "<code>" + EscapeHtml(a.tunnel_command) + "</code>"));
  }
  if (!a.diag_dir.empty())
    lines.push_back(Line("Diag dir:", "<code>" + EscapeHtml(a.diag_dir) + "</code>"));
  return SplitHtmlLines(lines, limit);
}

}  // namespace jobmon::alerts
