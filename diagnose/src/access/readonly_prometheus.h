#pragma once
// A read-only Prometheus we start (docs/diagnose.md, step 2, Cases A
// fallback and B): over a copy of a TSDB or an unpacked archive in a
// private temp dir, on a scanned free loopback port; stopped and the temp
// dir removed when the session ends or a signal comes (cleanup_on_signal.h).

#include <memory>
#include <string>

#include "jobmon/diagnose/tsdb_access.h"

namespace jobmon::diagnose {

// Serves a copy of `dir`: only its blocks when `blocks_only` (a live TSDB).
Expected<std::unique_ptr<TsdbSession>> ServeCopy(const std::string& dir, bool blocks_only,
                                                 const std::string& what,
                                                 const AccessOptions& options);
// Checks target.archive_path against the manifest's sha256, unpacks it, serves it.
Expected<std::unique_ptr<TsdbSession>> ServeArchive(const ResolvedTarget& target,
                                                    const AccessOptions& options);

}  // namespace jobmon::diagnose
