#include "line_walk_patterns.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "jobmon/common/ascii.h"

namespace jobmon::triage {
namespace {

// \s as Hyperscan reads it (PCRE's: space, \t, \n, \v, \f, \r).
bool IsRegexSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

bool DigitsAt(std::string_view s, size_t at, size_t count) {
  if (at + count > s.size()) return false;
  for (size_t i = at; i < at + count; ++i) {
    if (!IsAsciiDigit(s[i])) return false;
  }
  return true;
}

bool CharAt(std::string_view s, size_t at, char c) { return at < s.size() && s[at] == c; }

// "\d\d:\d\d:\d\d" at `at`.
bool ClockAt(std::string_view s, size_t at) {
  return DigitsAt(s, at, 2) && CharAt(s, at + 2, ':') && DigitsAt(s, at + 3, 2) &&
         CharAt(s, at + 5, ':') && DigitsAt(s, at + 6, 2);
}

// How many digits run from `at`, counting up to `cap`.
size_t DigitRun(std::string_view s, size_t at, size_t cap) {
  if (at >= s.size()) return 0;
  const size_t limit = std::min(cap, s.size() - at);
  size_t n = 0;
  while (n < limit && IsAsciiDigit(s[at + n])) ++n;
  return n;
}

// How many of [ \t] run from `at`.
size_t BlankRun(std::string_view s, size_t at) {
  size_t end = at;
  while (end < s.size() && (s[end] == ' ' || s[end] == '\t')) ++end;
  return end - at;
}

// `text` (a literal) starts at `at`.
template <size_t N>
bool TextAt(std::string_view s, size_t at, const char (&text)[N]) {
  constexpr size_t kLength = N - 1;
  return at <= s.size() && s.size() - at >= kLength && memcmp(s.data() + at, text, kLength) == 0;
}

// `text` (a literal: its length is known here, so the compare is a few
// loads) ends just before `end`.
template <size_t N>
bool EndsAt(std::string_view s, size_t end, const char (&text)[N]) {
  constexpr size_t kLength = N - 1;
  return end >= kLength && end <= s.size() && memcmp(s.data() + end - kLength, text, kLength) == 0;
}

// `^(\d+: )?X`: X at the line's start, or after an srun label there.
template <typename Rest>
bool AtLineStart(const LineStart& start, Rest rest) {
  return rest(start.line) || (!start.after_label.empty() && rest(start.after_label));
}

// The first bytes of the stamps the tests below read: [IWEF] (absl),
// '[' or ESC (detectron2's bracket, a bracketed clock), two digits (a clock,
// unix seconds).
bool StampCanStart(std::string_view s) {
  if (s.empty()) return false;
  const char c = s[0];
  if (IsAsciiDigit(c)) return s.size() > 1 && IsAsciiDigit(s[1]);
  return c == 'I' || c == 'W' || c == 'E' || c == 'F' || c == '[' || c == '\x1b';
}

}  // namespace

LineStart::LineStart(std::string_view text) : line(text) {
  const size_t digits = DigitRun(text, 0, text.size());
  if (digits > 0 && CharAt(text, digits, ':') && CharAt(text, digits + 1, ' '))
    after_label = text.substr(digits + 2);
  stamp_possible = StampCanStart(line) || StampCanStart(after_label);
}

bool AbslStampStartsLine(const LineStart& start) {
  return AtLineStart(start, [](std::string_view s) {
    // [IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}<space>
    return !s.empty() && (s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F') &&
           DigitsAt(s, 1, 4) && CharAt(s, 5, ' ') && ClockAt(s, 6) && CharAt(s, 14, '.') &&
           DigitsAt(s, 15, 6) && CharAt(s, 21, ' ');
  });
}

bool BracketStampStartsLine(const LineStart& start) {
  return AtLineStart(start, [](std::string_view s) {
    // (\x1b\[[0-9;]{1,6}m)?: a colour's CSI first.
    if (s.size() >= 2 && s[0] == '\x1b' && s[1] == '[') {
      size_t n = 0;
      while (n < 7 && 2 + n < s.size() && (IsAsciiDigit(s[2 + n]) || s[2 + n] == ';')) ++n;
      if (n == 0 || n > 6 || !CharAt(s, 2 + n, 'm')) return false;
      s.remove_prefix(3 + n);
    }
    // \[\d\d/\d\d \d\d:\d\d:\d\d[ \]]
    return CharAt(s, 0, '[') && DigitsAt(s, 1, 2) && CharAt(s, 3, '/') && DigitsAt(s, 4, 2) &&
           CharAt(s, 6, ' ') && ClockAt(s, 7) && (CharAt(s, 15, ' ') || CharAt(s, 15, ']'));
  });
}

bool EpochSecondsStartLine(const LineStart& start) {
  return AtLineStart(start, [](std::string_view s) {
    // 1[5-9]\d{8}, then a word's end: at once, or after a fraction (\.\d+).
    if (s.size() < 10 || s[0] != '1' || s[1] < '5' || s[1] > '9' || !DigitsAt(s, 2, 8))
      return false;
    if (s.size() == 10 || !IsWordChar(s[10])) return true;
    if (s[10] != '.') return false;
    const size_t fraction = DigitRun(s, 11, s.size());
    return fraction > 0 && (11 + fraction == s.size() || !IsWordChar(s[11 + fraction]));
  });
}

bool ClockStartsLine(const LineStart& start) {
  return AtLineStart(start, [](std::string_view s) {
    const size_t at = CharAt(s, 0, '[') ? 1 : 0;
    if (!ClockAt(s, at)) return false;
    // ([.,]\d{1,6})?\]?\s after the clock.
    auto ends_at = [&](size_t i) {
      return (CharAt(s, i, ']') && i + 1 < s.size() && IsRegexSpace(s[i + 1])) ||
             (i < s.size() && IsRegexSpace(s[i]));
    };
    const size_t after = at + 8;
    if (ends_at(after)) return true;
    if (!CharAt(s, after, '.') && !CharAt(s, after, ',')) return false;
    const size_t fraction = DigitRun(s, after + 1, 7);
    return fraction >= 1 && fraction <= 6 && ends_at(after + 1 + fraction);
  });
}

bool IsoStampInLine(std::string_view line) {
  // "YYYY-MM-DD?hh:mm:ss": the first '-' is at 4 and the stamp 19 bytes long.
  constexpr size_t kDash = 4, kLength = 19;
  if (line.size() < kLength) return false;
  const char* const begin = line.data();
  const char* const last_dash = begin + line.size() - (kLength - kDash);
  for (const char* at = begin + kDash; at <= last_dash; ++at) {
    at = static_cast<const char*>(memchr(at, '-', static_cast<size_t>(last_dash - at) + 1));
    if (!at) return false;
    const size_t start = static_cast<size_t>(at - begin) - kDash;
    if (DigitsAt(line, start, 4) && DigitsAt(line, start + 5, 2) && CharAt(line, start + 7, '-') &&
        DigitsAt(line, start + 8, 2) &&
        (CharAt(line, start + 10, 'T') || CharAt(line, start + 10, ' ')) &&
        ClockAt(line, start + 11))
      return true;
  }
  return false;
}

bool GenericStepKeyword(std::string_view line) {
  auto word_at = [&](size_t at, std::string_view word) {
    if (at + word.size() > line.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (AsciiLower(line[at + i]) != word[i]) return false;
    }
    return true;
  };
  // [ \t:=#]{1,3}\d after a keyword ending before `at`.
  auto counted_at = [&](size_t at) {
    size_t n = 0;
    while (n < 4 && at + n < line.size()) {
      const char c = line[at + n];
      if (c != ' ' && c != '\t' && c != ':' && c != '=' && c != '#') break;
      ++n;
    }
    return n >= 1 && n <= 3 && at + n < line.size() && IsAsciiDigit(line[at + n]);
  };
  for (size_t at = 0; at + 5 < line.size() + 1; ++at) {
    const char c = AsciiLower(line[at]);
    if (c == 's') {
      if (word_at(at, "step") && counted_at(at + 4)) return true;
    } else if (c == 'i' && word_at(at, "iter")) {
      if (counted_at(at + 4) || (word_at(at + 4, "ation") && counted_at(at + 9))) return true;
    }
  }
  return false;
}

bool MaxTextStepAt(std::string_view line, size_t end) {
  return EndsAt(line, end, "completed step:") && CharAt(line, end, ' ') &&
         DigitsAt(line, end + 1, 1);
}

bool MegatronIterationAt(std::string_view line, size_t end) {
  if (end == 0 || !EndsAt(line, end - 1, "iteration")) return false;
  size_t at = end - 1;
  const size_t blanks = BlankRun(line, at);
  if (blanks == 0) return false;
  at += blanks;
  const size_t done = DigitRun(line, at, line.size());
  if (done == 0 || !CharAt(line, at + done, '/')) return false;
  at += done + 1;
  at += BlankRun(line, at);
  const size_t total = DigitRun(line, at, line.size());
  if (total == 0) return false;
  at += total;
  at += BlankRun(line, at);
  return CharAt(line, at, '|');
}

bool TorchTitanStepAt(std::string_view line, size_t end) {
  if (!EndsAt(line, end, "step:")) return false;
  size_t at = end;
  const size_t blanks = BlankRun(line, at);
  if (blanks == 0) return false;
  at += blanks;
  const size_t step = DigitRun(line, at, line.size());
  if (step == 0) return false;
  at += step;
  const size_t more = BlankRun(line, at);
  if (more == 0) return false;
  at += more;
  if (TextAt(line, at, "\x1b[")) {
    const size_t colour = DigitRun(line, at + 2, line.size());
    if (colour > 0 && CharAt(line, at + 2 + colour, 'm') && TextAt(line, at + 3 + colour, "loss:"))
      return true;
  }
  return TextAt(line, at, "loss:");
}

bool DeepSpeedSkippedAt(std::string_view line, size_t end) {
  if (!EndsAt(line, end, "step=")) return false;
  const size_t step = DigitRun(line, end, line.size());
  return step > 0 && TextAt(line, end + step, ", skipped=");
}

}  // namespace jobmon::triage
