#include "jobmon/common/hostlist.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <unordered_set>

namespace jobmon {
namespace {

struct NumberRange {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;  // zero padding of the lower bound
};

// One piece of a host name pattern: literal text, or a bracketed set of ranges.
struct Segment {
  std::string literal;
  std::vector<NumberRange> ranges;  // empty for a literal segment
};

constexpr size_t kMaxDigits = 18;  // fits in uint64_t without overflow

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

Expected<uint64_t> ParseBound(std::string_view digits, std::string_view context) {
  if (digits.empty() || digits.size() > kMaxDigits ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Error{"bad range bound " + Quote(digits) + " in " + Quote(context)};
  }
  uint64_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

Expected<std::vector<NumberRange>> ParseBracket(std::string_view body, std::string_view term) {
  std::vector<NumberRange> ranges;
  if (body.empty()) return Error{"empty brackets in " + Quote(term)};
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    std::string_view spec =
        body.substr(start, comma == std::string_view::npos ? body.npos : comma - start);
    if (spec.empty()) return Error{"empty range in " + Quote(term)};
    size_t dash = spec.find('-');
    std::string_view lo_text = spec.substr(0, dash);
    std::string_view hi_text = dash == spec.npos ? lo_text : spec.substr(dash + 1);
    auto lo = ParseBound(lo_text, term);
    if (!lo) return lo.error();
    auto hi = ParseBound(hi_text, term);
    if (!hi) return hi.error();
    if (*hi < *lo) return Error{"reversed range " + Quote(spec) + " in " + Quote(term)};
    ranges.push_back({*lo, *hi, lo_text.size()});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ranges;
}

Expected<std::vector<Segment>> ParseTerm(std::string_view term) {
  if (term.empty()) return Error{"empty host name in hostlist"};
  std::vector<Segment> segments;
  size_t pos = 0;
  while (pos < term.size()) {
    size_t open = term.find('[', pos);
    size_t close_before = term.find(']', pos);
    if (close_before < open) return Error{"unbalanced ']' in " + Quote(term)};
    if (open == std::string_view::npos) {
      // Slurm accepts text after a bracket group only before another one.
      if (!segments.empty()) {
        return Error{"text after the last ']' in " + Quote(term) + " (Slurm allows no suffix)"};
      }
      segments.push_back({std::string(term.substr(pos)), {}});
      break;
    }
    if (open > pos) segments.push_back({std::string(term.substr(pos, open - pos)), {}});
    size_t close = term.find(']', open);
    if (close == std::string_view::npos) return Error{"unclosed '[' in " + Quote(term)};
    std::string_view body = term.substr(open + 1, close - open - 1);
    if (body.find('[') != body.npos) return Error{"nested '[' in " + Quote(term)};
    auto ranges = ParseBracket(body, term);
    if (!ranges) return ranges.error();
    segments.push_back({"", std::move(ranges.value())});
    pos = close + 1;
  }
  return segments;
}

// Splits at commas outside brackets.
Expected<std::vector<std::string_view>> SplitTopLevel(std::string_view expression) {
  std::vector<std::string_view> terms;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= expression.size(); ++i) {
    char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') {
      if (++depth > 1) return Error{"nested '[' in " + Quote(expression)};
    } else if (c == ']') {
      if (--depth < 0) return Error{"unbalanced ']' in " + Quote(expression)};
    } else if (c == ',' && depth == 0) {
      terms.push_back(expression.substr(start, i - start));
      start = i + 1;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      return Error{"whitespace in hostlist " + Quote(expression)};
    }
  }
  if (depth != 0) return Error{"unclosed '[' in " + Quote(expression)};
  return terms;
}

std::string FormatNumber(uint64_t value, size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

uint64_t CountHosts(const std::vector<Segment>& segments) {
  uint64_t count = 1;
  for (const Segment& segment : segments) {
    uint64_t in_segment = segment.ranges.empty() ? 1 : 0;
    for (const NumberRange& r : segment.ranges) in_segment += r.hi - r.lo + 1;
    if (in_segment > kMaxHostlistHosts || count * in_segment > kMaxHostlistHosts) {
      return kMaxHostlistHosts + 1;
    }
    count *= in_segment;
  }
  return count;
}

void ExpandSegments(const std::vector<Segment>& segments, size_t index, std::string& prefix,
                    std::vector<std::string>& out) {
  if (index == segments.size()) {
    out.push_back(prefix);
    return;
  }
  const Segment& segment = segments[index];
  size_t keep = prefix.size();
  if (segment.ranges.empty()) {
    prefix += segment.literal;
    ExpandSegments(segments, index + 1, prefix, out);
  } else {
    for (const NumberRange& r : segment.ranges) {
      for (uint64_t v = r.lo; v <= r.hi; ++v) {
        prefix += FormatNumber(v, r.width);
        ExpandSegments(segments, index + 1, prefix, out);
        prefix.resize(keep);
      }
    }
  }
  prefix.resize(keep);
}

}  // namespace

Expected<std::vector<std::string>> ExpandHostlist(std::string_view expression) {
  if (expression.empty()) return Error{"empty hostlist"};
  auto terms = SplitTopLevel(expression);
  if (!terms) return terms.error();
  std::vector<std::string> hosts;
  for (std::string_view term : *terms) {
    auto segments = ParseTerm(term);
    if (!segments) return segments.error();
    if (hosts.size() + CountHosts(*segments) > kMaxHostlistHosts) {
      return Error{"hostlist " + Quote(expression) + " expands to more than " +
                   std::to_string(kMaxHostlistHosts) + " hosts"};
    }
    std::string prefix;
    ExpandSegments(*segments, 0, prefix, hosts);
  }
  return hosts;
}

namespace {

struct NumberedHost {
  uint64_t value;
  std::string digits;
};

bool HasPadding(std::string_view digits) { return digits.size() > 1 && digits[0] == '0'; }

std::string CompressGroup(const std::string& prefix, std::vector<NumberedHost> numbers) {
  std::sort(numbers.begin(), numbers.end(), [](const NumberedHost& a, const NumberedHost& b) {
    return a.value != b.value ? a.value < b.value : a.digits < b.digits;
  });
  if (numbers.size() == 1) return prefix + numbers[0].digits;
  struct Run {
    std::string lo, hi;
    uint64_t hi_value;
    size_t width;
  };
  std::vector<Run> runs;
  for (const NumberedHost& n : numbers) {
    if (!runs.empty()) {
      Run& last = runs.back();
      if (n.value == last.hi_value + 1 && FormatNumber(n.value, last.width) == n.digits) {
        last.hi = n.digits;
        last.hi_value = n.value;
        continue;
      }
    }
    runs.push_back({n.digits, n.digits, n.value, HasPadding(n.digits) ? n.digits.size() : 0});
  }
  std::string out = prefix + "[";
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i > 0) out += ",";
    out += runs[i].lo;
    if (runs[i].hi != runs[i].lo) out += "-" + runs[i].hi;
  }
  return out + "]";
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  // Output items in first-seen order: a numbered group (by prefix) or a
  // name without a numeric suffix, printed as it is.
  struct Item {
    bool literal;
    std::string text;  // the literal name, or the group's prefix
  };
  std::vector<Item> order;
  std::map<std::string, std::vector<NumberedHost>> groups;
  std::unordered_set<std::string> seen;
  for (const std::string& host : hosts) {
    if (host.empty() || !seen.insert(host).second) continue;
    size_t digits_start = host.size();
    while (digits_start > 0 && host[digits_start - 1] >= '0' && host[digits_start - 1] <= '9') {
      --digits_start;
    }
    size_t digit_count = host.size() - digits_start;
    if (digit_count == 0 || digit_count > kMaxDigits) {
      order.push_back({true, host});
      continue;
    }
    std::string prefix = host.substr(0, digits_start);
    std::string digits = host.substr(digits_start);
    auto [it, inserted] = groups.try_emplace(prefix);
    if (inserted) order.push_back({false, prefix});
    it->second.push_back({std::stoull(digits), digits});
  }
  std::string out;
  for (const Item& item : order) {
    if (!out.empty()) out += ",";
    out += item.literal ? item.text : CompressGroup(item.text, groups[item.text]);
  }
  return out;
}

}  // namespace jobmon
