// ScopeSelectors: a PromQL tokenizer just deep enough to tell a vector
// selector's metric name from a function, an aggregation, a keyword, a
// label list, a string or a number (PromQL's lexer, generated_parser.y).
#include "access/job_scope.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "jobmon/common/store_labels.h"

namespace jobmon::diagnose {

namespace {

constexpr std::array<std::string_view, 14> kAggregations = {
    "sum",   "min",          "max",     "avg",  "group",    "stddev", "stdvar",
    "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"};
// Followed by a parenthesized list of label names, not expressions.
constexpr std::array<std::string_view, 6> kLabelLists = {"by",       "without",    "on",
                                                         "ignoring", "group_left", "group_right"};
constexpr std::array<std::string_view, 8> kKeywords = {"and",    "or",    "unless", "bool",
                                                       "offset", "atan2", "inf",    "nan"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

bool IdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IdentChar(char c) { return IdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

std::string Lower(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t SkipSpace(std::string_view text, size_t at) {
  while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  return at;
}

// The index after the string literal opening at `at`; npos when unterminated.
size_t StringEnd(std::string_view text, size_t at) {
  const char quote = text[at];
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\' && quote != '`') {
      ++i;
    } else if (text[i] == quote) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// The index of the `close` matching text[at] (skipping strings); npos when none.
size_t Closing(std::string_view text, size_t at, char close) {
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '"' || text[i] == '\'' || text[i] == '`') {
      i = StringEnd(text, i);
      if (i == std::string_view::npos) return i;
      --i;
    } else if (text[i] == close) {
      return i;
    }
  }
  return std::string_view::npos;
}

// A number or a duration: digits, letters (units, exponent, hex), dots, and
// an exponent's sign.
size_t NumberEnd(std::string_view text, size_t at) {
  size_t i = at;
  while (i < text.size()) {
    char c = text[i];
    bool exponent_sign = (c == '+' || c == '-') && i > at &&
                         (text[i - 1] == 'e' || text[i - 1] == 'E') &&
                         !(text.substr(at, 2) == "0x" || text.substr(at, 2) == "0X");
    if (!(IdentChar(c) || c == '.' || exponent_sign) || c == ':') break;
    ++i;
  }
  return i;
}

}  // namespace

std::string JobMatchers(std::string_view job_id, std::string_view cluster) {
  std::string out = store_labels::Matcher(store_labels::kJobId, job_id);
  if (!cluster.empty()) out += "," + store_labels::Matcher(store_labels::kCluster, cluster);
  return out;
}

Expected<std::string> ScopeSelectors(std::string_view text, std::string_view matchers) {
  std::string out;
  out.reserve(text.size() + 4 * matchers.size());
  // The selector's braces, `matchers` added before the closing one.
  auto braces = [&](size_t open) -> Expected<size_t> {
    size_t close = Closing(text, open, '}');
    if (close == std::string_view::npos)
      return Error{fmt::format("PromQL '{}': unterminated '{{'", text)};
    std::string_view inner = text.substr(open + 1, close - open - 1);
    size_t last = inner.find_last_not_of(" \t\r\n");
    out += '{';
    out += inner;
    if (last != std::string_view::npos && inner[last] != ',') out += ',';
    out += matchers;
    out += '}';
    return close + 1;
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'' || c == '`') {
      size_t end = StringEnd(text, i);
      if (end == std::string_view::npos)
        return Error{fmt::format("PromQL '{}': unterminated string", text)};
      out += text.substr(i, end - i);
      i = end;
    } else if (c == '#') {  // a comment, to the end of the line
      size_t end = std::min(text.find('\n', i), text.size());
      out += text.substr(i, end - i);
      i = end;
    } else if (c == '[') {  // a range or subquery: durations only
      size_t close = Closing(text, i, ']');
      if (close == std::string_view::npos)
        return Error{fmt::format("PromQL '{}': unterminated '['", text)};
      out += text.substr(i, close + 1 - i);
      i = close + 1;
    } else if (c == '{') {  // a selector without a metric name
      auto next = braces(i);
      if (!next) return next.error();
      i = *next;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() &&
                std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      size_t end = NumberEnd(text, i);
      out += text.substr(i, end - i);
      i = end;
    } else if (IdentStart(c)) {
      size_t end = i;
      while (end < text.size() && IdentChar(text[end])) ++end;
      const std::string_view word = text.substr(i, end - i);
      const std::string lower = Lower(word);
      const size_t next = SkipSpace(text, end);
      const char after = next < text.size() ? text[next] : '\0';
      out += word;
      i = end;
      if (after == '(' && OneOf(kLabelLists, lower)) {
        size_t close = Closing(text, next, ')');
        if (close == std::string_view::npos)
          return Error{fmt::format("PromQL '{}': unterminated '('", text)};
        out += text.substr(end, close + 1 - end);
        i = close + 1;
        continue;
      }
      if (after == '(' || OneOf(kKeywords, lower) || OneOf(kLabelLists, lower)) continue;
      if (OneOf(kAggregations, lower)) {
        size_t word_end = next;
        while (word_end < text.size() && IdentChar(text[word_end])) ++word_end;
        const std::string modifier = Lower(text.substr(next, word_end - next));
        if (modifier == "by" || modifier == "without") continue;
      }
      // A metric name: a selector.
      if (after == '{') {
        out += text.substr(end, next - end);
        auto after_braces = braces(next);
        if (!after_braces) return after_braces.error();
        i = *after_braces;
      } else {
        out += '{';
        out += matchers;
        out += '}';
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

Expected<std::vector<Series>> JobScopedSource::QueryRange(std::string_view promql,
                                                          const TimeRange& range,
                                                          double step_seconds) {
  auto scoped = ScopeSelectors(promql, matchers_);
  if (!scoped) return scoped.error();
  return inner_.QueryRange(*scoped, range, step_seconds);
}

Expected<std::vector<Series>> JobScopedSource::QueryInstant(std::string_view promql, double time) {
  auto scoped = ScopeSelectors(promql, matchers_);
  if (!scoped) return scoped.error();
  return inner_.QueryInstant(*scoped, time);
}

Expected<std::vector<std::string>> JobScopedSource::LabelValues(
    std::string_view label, const std::optional<TimeRange>& range, std::string_view match) {
  std::string selector = "{" + matchers_ + "}";
  if (!match.empty()) {
    auto scoped = ScopeSelectors(match, matchers_);
    if (!scoped) return scoped.error();
    selector = std::move(*scoped);
  }
  return inner_.LabelValues(label, range, selector);
}

}  // namespace jobmon::diagnose
