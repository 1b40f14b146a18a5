#pragma once
// SHA-256 of a file (libcrypto): the archiver records it in the manifest,
// `jobmon diagnose` checks an archive against it before unpacking; of a
// text: the name of a cached signature database (triage). A library apart
// from jobmon::common, which the SPANK plugin links.

#include <string>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon {

// Lower-case hex.
Expected<std::string> Sha256OfFile(const std::string& path);
// Of an open file, from offset 0 (pread: its offset is left as it was), so
// the bytes hashed are those of the very file unpacked next.
Expected<std::string> Sha256OfFd(int fd);
std::string Sha256OfText(std::string_view text);

}  // namespace jobmon
