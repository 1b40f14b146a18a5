#pragma once
// A decimal number that is the whole of `text` (std::from_chars: no sign
// for an unsigned T, no spaces, no trailing bytes); nullopt otherwise, and
// for an empty text or one out of T's range. The one parser of procfs
// fields, pids and labels' numbers.

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace jobmon {

template <typename T>
std::optional<T> WholeNumber(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// WholeNumber in a signed T, negative numbers refused: a count or an index
// written by a program that never prints a sign.
template <typename T>
std::optional<T> NonNegativeNumber(std::string_view text) {
  const std::optional<T> value = WholeNumber<T>(text);
  if (!value || *value < 0) return std::nullopt;
  return value;
}

}  // namespace jobmon
