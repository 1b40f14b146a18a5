#pragma once
// The value of `--diag[=on|off]`, shared by the SPANK plugin and the tools.

#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon {

enum class DiagMode { kOff, kOn };

// "on" / "off" (case-insensitive); an absent value (`--diag` alone) means on.
Expected<DiagMode> ParseDiagOption(std::string_view value);

// `--diag-on-hang=notify|signal|requeue|cancel`: what the job's owner lets
// the monitor do when the job hangs (docs/recovery.md), within what the
// cluster's admins allow ([recovery] in jobmon.toml). notify, the default,
// is an alert and nothing else.
enum class OnHang { kNotify, kSignal, kRequeue, kCancel };
Expected<OnHang> ParseOnHang(std::string_view value);
std::string_view ToString(OnHang choice);

}  // namespace jobmon
