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

Expected<OnHang> ParseOnHang(std::string_view value) {
  for (OnHang choice : {OnHang::kNotify, OnHang::kSignal, OnHang::kRequeue, OnHang::kCancel}) {
    if (value == ToString(choice)) return choice;
  }
  return Error{"invalid --diag-on-hang value '" + std::string(value) +
               "': expected notify, signal, requeue or cancel"};
}

std::string_view ToString(OnHang choice) {
  switch (choice) {
    case OnHang::kSignal:
      return "signal";
    case OnHang::kRequeue:
      return "requeue";
    case OnHang::kCancel:
      return "cancel";
    case OnHang::kNotify:
      break;
  }
  return "notify";
}

}  // namespace jobmon
