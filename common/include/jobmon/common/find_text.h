#pragma once
// Substring search for per-line parsers, which run on every step line of a
// large log: std::string_view::find compares from every position byte by
// byte, and glibc's memmem sets up a shift table per call, which costs more
// than a 100-byte line's search. Here memchr (vectorised) finds each
// candidate of the needle's first byte and memcmp confirms the rest.

#include <cstring>
#include <string_view>

namespace jobmon {

namespace find_text_detail {

// `needle` (`length` bytes, at least one) in `text` from `from`. Given
// kFixedLength (the same length, known at compile time), the compare after
// each candidate is a few loads, not a call.
template <size_t kFixedLength = 0>
inline size_t Find(std::string_view text, const char* needle, size_t length, size_t from) {
  if (from > text.size() || text.size() < length) return std::string_view::npos;
  const char* const begin = text.data();
  const char* const last = begin + text.size() - length;  // the last start that fits
  for (const char* at = begin + from; at <= last;) {
    const void* candidate = memchr(at, needle[0], static_cast<size_t>(last - at) + 1);
    if (!candidate) break;
    at = static_cast<const char*>(candidate);
    if (memcmp(at + 1, needle + 1, (kFixedLength > 0 ? kFixedLength : length) - 1) == 0)
      return static_cast<size_t>(at - begin);
    ++at;
  }
  return std::string_view::npos;
}

}  // namespace find_text_detail

// The first occurrence of `needle` in `text` at or after `from`; npos when none.
inline size_t FindText(std::string_view text, std::string_view needle, size_t from = 0) {
  if (needle.empty()) return from <= text.size() ? from : std::string_view::npos;
  return find_text_detail::Find(text, needle.data(), needle.size(), from);
}

// The same for a literal needle, whose length is known at compile time.
template <size_t N>
inline size_t FindText(std::string_view text, const char (&needle)[N], size_t from = 0) {
  if constexpr (N <= 1) {
    return from <= text.size() ? from : std::string_view::npos;
  } else {
    return find_text_detail::Find<N - 1>(text, needle, N - 1, from);
  }
}

}  // namespace jobmon
