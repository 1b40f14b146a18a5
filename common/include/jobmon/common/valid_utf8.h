#pragma once
// Text from a program or a file a job's user controls, made valid UTF-8
// before a strict reader sees it: nlohmann-json's parser rejects a whole
// document for one invalid byte in any string and has no replacing mode
// for parsing (its error_handler_t::replace is for dump() only).

#include <string>
#include <string_view>

namespace jobmon {

// `text` with every invalid UTF-8 sequence (a stray byte, a truncated or
// overlong sequence, a surrogate, a code point past U+10FFFF) replaced by
// U+FFFD; valid text comes back unchanged.
std::string ValidUtf8(std::string_view text);

}  // namespace jobmon
