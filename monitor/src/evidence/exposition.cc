#include "jobmon/monitor/exposition.h"

#include <cctype>
#include <cmath>

#include "jobmon/common/prom_value.h"

namespace jobmon::monitor {
namespace {

bool NameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

bool ParseLine(std::string_view line, Sample* sample) {
  size_t i = 0;
  while (i < line.size() && NameChar(line[i], i == 0)) ++i;
  if (i == 0) return false;
  sample->name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      size_t key_start = i;
      while (i < line.size() && NameChar(line[i], i == key_start)) ++i;
      if (i == key_start || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        return false;
      }
      std::string key(line.substr(key_start, i - key_start));
      i += 2;
      std::string value;
      for (;;) {
        if (i >= line.size()) return false;
        char c = line[i++];
        if (c == '"') break;
        if (c == '\\') {
          if (i >= line.size()) return false;
          char escaped = line[i++];
          value += escaped == 'n' ? '\n' : escaped;
        } else {
          value += c;
        }
      }
      sample->labels[key] = std::move(value);
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == ',') ++i;
    }
  }
  while (i < line.size() && line[i] == ' ') ++i;
  size_t value_end = line.find(' ', i);
  std::string_view value_text =
      line.substr(i, value_end == std::string_view::npos ? std::string_view::npos : value_end - i);
  const std::optional<double> value = ParsePromValue(value_text);
  if (!value) return false;
  sample->value = *value;
  return true;
}

}  // namespace

Exposition ParseExposition(std::string_view text) {
  Exposition out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    Sample sample;
    if (ParseLine(line, &sample)) {
      out.samples.push_back(std::move(sample));
    } else {
      ++out.bad_lines;
    }
  }
  return out;
}

}  // namespace jobmon::monitor
