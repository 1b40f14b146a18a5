#include "jobmon/common/valid_utf8.h"

#include <utf8.h>

#include <iterator>

namespace jobmon {

std::string ValidUtf8(std::string_view text) {
  if (utf8::is_valid(text.begin(), text.end())) return std::string(text);
  std::string valid;
  valid.reserve(text.size() + 16);
  utf8::replace_invalid(text.begin(), text.end(), std::back_inserter(valid), 0xFFFD);
  return valid;
}

}  // namespace jobmon
