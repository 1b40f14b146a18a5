#pragma once
// The plugin's rule_file: a Prometheus rules file the job's Prometheus
// evaluates. Prometheus refuses to start when a file in rule_files cannot
// be read, so the prolog checks it first, as the user Prometheus runs as,
// and leaves the rules out (one [diag] line) rather than lose the job's TSDB.

#include <sys/types.h>

#include <string>

#include "jobmon/common/expected.h"

namespace jobmon::lifecycle {

// Whether uid:gid can open `path` for reading and it is a regular file.
Expected<void> CheckRuleFile(const std::string& path, uid_t uid, gid_t gid);

}  // namespace jobmon::lifecycle
