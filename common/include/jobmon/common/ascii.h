#pragma once
// ASCII character classes for parsing machine-written text (log prefixes,
// step lines, /proc fields): unlike <cctype>, independent of the locale
// and safe for any char value.

namespace jobmon {

constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// A letter, digit or underscore: a character of an identifier.
constexpr bool IsWordChar(char c) { return IsAsciiLetter(c) || IsAsciiDigit(c) || c == '_'; }
constexpr char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace jobmon
