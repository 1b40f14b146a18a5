#pragma once
// Substring search for per-line parsers, which run on every step line of a
// large log: std::string_view::find compares from every position byte by
// byte, and glibc's memmem sets up a shift table per call, which costs more
// than a 100-byte line's search. Here memchr (vectorised) finds each
// candidate of the needle's first byte and memcmp confirms the rest.

#include <cstring>
#include <string_view>

namespace jobmon {

// The first occurrence of `needle` in `text` at or after `from`; npos when none.
inline size_t FindText(std::string_view text, std::string_view needle, size_t from = 0) {
  if (from > text.size()) return std::string_view::npos;
  if (needle.empty()) return from;
  if (text.size() < needle.size()) return std::string_view::npos;
  const char* const begin = text.data();
  const char* const last = begin + text.size() - needle.size();  // the last start that fits
  for (const char* at = begin + from; at <= last;) {
    const void* candidate = memchr(at, needle.front(), static_cast<size_t>(last - at) + 1);
    if (!candidate) break;
    at = static_cast<const char*>(candidate);
    if (memcmp(at + 1, needle.data() + 1, needle.size() - 1) == 0)
      return static_cast<size_t>(at - begin);
    ++at;
  }
  return std::string_view::npos;
}

// The same for a literal needle: its length is known here, so the compare
// after each candidate is a few loads, not a call.
template <size_t N>
inline size_t FindText(std::string_view text, const char (&needle)[N], size_t from = 0) {
  constexpr size_t kLength = N - 1;
  if constexpr (kLength == 0) {
    return from <= text.size() ? from : std::string_view::npos;
  } else {
    if (from > text.size() || text.size() < kLength) return std::string_view::npos;
    const char* const begin = text.data();
    const char* const last = begin + text.size() - kLength;
    for (const char* at = begin + from; at <= last;) {
      const void* candidate = memchr(at, needle[0], static_cast<size_t>(last - at) + 1);
      if (!candidate) break;
      at = static_cast<const char*>(candidate);
      if (memcmp(at + 1, needle + 1, kLength - 1) == 0) return static_cast<size_t>(at - begin);
      ++at;
    }
    return std::string_view::npos;
  }
}

}  // namespace jobmon
