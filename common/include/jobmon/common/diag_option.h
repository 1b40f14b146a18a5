#pragma once
// The value of `--diag[=on|off]`, shared by the SPANK plugin and the tools.

#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon {

enum class DiagMode { kOff, kOn };

// "on" / "off" (case-insensitive); an absent value (`--diag` alone) means on.
Expected<DiagMode> ParseDiagOption(std::string_view value);

}  // namespace jobmon
