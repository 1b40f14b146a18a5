#include "jobmon/monitor/exposition.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "jobmon/common/prom_value.h"
#include "jobmon/common/text_lines.h"

namespace jobmon::monitor {
namespace {

bool NameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

enum class Parsed { kSample, kBad, kSkipped };

bool Wanted(std::string_view name, const std::vector<std::string>* names) {
  return !names || std::find(names->begin(), names->end(), name) != names->end();
}

Parsed ParseLine(std::string_view line, const std::vector<std::string>* names, Sample* sample) {
  size_t i = 0;
  while (i < line.size() && NameChar(line[i], i == 0)) ++i;
  if (i == 0) return Parsed::kBad;
  if (!Wanted(line.substr(0, i), names)) return Parsed::kSkipped;
  sample->name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    sample->labels.reserve(4);  // host, gpu and one more: one allocation
    for (;;) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      size_t key_start = i;
      while (i < line.size() && NameChar(line[i], i == key_start)) ++i;
      if (i == key_start || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        return Parsed::kBad;
      }
      const std::string_view key = line.substr(key_start, i - key_start);
      i += 2;
      std::string value;
      for (;;) {
        if (i >= line.size()) return Parsed::kBad;
        char c = line[i++];
        if (c == '"') break;
        if (c == '\\') {
          if (i >= line.size()) return Parsed::kBad;
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
  if (!value) return Parsed::kBad;
  sample->value = *value;
  return Parsed::kSample;
}

Exposition Parse(std::string_view text, const std::vector<std::string>* names) {
  Exposition out;
  // At most a sample a line: one allocation instead of the vector's
  // doublings. Not when filtering: a scrape keeps a few of its many lines,
  // and a vector for all of them was an allocation and a pass for nothing.
  if (!names)
    out.samples.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  for (std::string_view line : TextLines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    Sample sample;
    switch (ParseLine(line, names, &sample)) {
      case Parsed::kSample:
        out.samples.push_back(std::move(sample));
        break;
      case Parsed::kBad:
        ++out.bad_lines;
        break;
      case Parsed::kSkipped:
        break;
    }
  }
  return out;
}

}  // namespace

Exposition ParseExposition(std::string_view text) { return Parse(text, nullptr); }

Exposition ParseExposition(std::string_view text, const std::vector<std::string>& names) {
  return Parse(text, &names);
}

}  // namespace jobmon::monitor
