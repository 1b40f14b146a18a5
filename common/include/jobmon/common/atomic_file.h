#pragma once
// Files that readers see whole or not at all, even across a crash.

#include <sys/types.h>

#include <string>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon {

// Writes a temp file beside `path`, fsyncs it, renames it over `path`, and
// fsyncs the directory. On failure the old file (if any) is untouched and
// the temp file removed.
Expected<void> WriteFileAtomically(const std::string& path, std::string_view content,
                                   mode_t mode = 0644);

}  // namespace jobmon
