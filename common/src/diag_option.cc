#include "jobmon/common/diag_option.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace jobmon {

Expected<DiagMode> ParseDiagOption(std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.empty() || lower == "on") return DiagMode::kOn;
  if (lower == "off") return DiagMode::kOff;
  return Error{"invalid --diag value '" + std::string(value) + "': expected 'on' or 'off'"};
}

}  // namespace jobmon
