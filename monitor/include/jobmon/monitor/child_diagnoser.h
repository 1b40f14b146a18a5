#pragma once
// The daemon's end-of-job diagnosis, run as `jobmon diagnose --for-monitor`
// in a child process that becomes the job's user (uid and gid from Slurm)
// before exec: everything the diagnosis reads (manifest, log, archive,
// TSDB) it reads with that user's rights alone, and whatever it meets (a
// FIFO, a sparse terabyte, a decompression bomb) costs only the child,
// which is stopped at the timeout (SIGTERM, so it stops its read-only
// Prometheus, then SIGKILL to its process group) and dies with the daemon.

#include <chrono>
#include <string>
#include <vector>

#include "jobmon/diagnose/diagnosis_report.h"

namespace jobmon::monitor {

struct ChildDiagnoserOptions {
  std::string jobmon_binary = "/usr/bin/jobmon";  // [monitor] jobmon_binary
  // The longest a child may run when the request has no cancel flag; the
  // caller (EndDiagnosis) normally cancels it at its own timeout first.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds grace{std::chrono::seconds(10)};
  size_t max_report_bytes = size_t{4} << 20;
};

// The child's command line for a request (pure, for tests).
std::vector<std::string> ChildDiagnoseArgv(const ChildDiagnoserOptions& options,
                                           const diagnose::TargetRequest& request);

diagnose::ReportDiagnoser ChildDiagnoser(ChildDiagnoserOptions options);

}  // namespace jobmon::monitor
