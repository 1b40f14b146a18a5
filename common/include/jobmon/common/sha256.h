#pragma once
// SHA-256 of a file (libcrypto): the archiver records it in the manifest,
// `jobmon diagnose` checks an archive against it before unpacking. A
// library apart from jobmon::common, which the SPANK plugin links.

#include <string>

#include "jobmon/common/expected.h"

namespace jobmon {

// Lower-case hex.
Expected<std::string> Sha256OfFile(const std::string& path);

}  // namespace jobmon
