#pragma once
// The playbook tests' check that counters were read only through rate() or
// increase() (docs/diagnose.md, "Common pitfalls"): every metric name
// ending in _total in a query must sit right inside "rate(" or "increase(".
// A plain scan, not std::regex (GCC 12's <regex> trips -Wmaybe-uninitialized
// under the sanitizers).

#include <string>
#include <string_view>
#include <vector>

namespace jobmon::diagnose::testing {

inline bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

// The counter names in `query` not read through rate()/increase().
inline std::vector<std::string> BareCounterReads(std::string_view query) {
  std::vector<std::string> bare;
  constexpr std::string_view kSuffix = "_total";
  for (size_t at = query.find(kSuffix); at != std::string_view::npos;
       at = query.find(kSuffix, at + 1)) {
    const size_t end = at + kSuffix.size();
    if (end < query.size() && IsNameChar(query[end])) continue;  // a longer name
    size_t start = at;
    while (start > 0 && IsNameChar(query[start - 1])) --start;
    const std::string_view before = query.substr(0, start);
    if (!before.ends_with("rate(") && !before.ends_with("increase("))
      bare.emplace_back(query.substr(start, end - start));
  }
  return bare;
}

}  // namespace jobmon::diagnose::testing
