#pragma once
// A Ray session's worker logs read as the driver would show them
// (docs/ray.md): `jobmon triage --ray-logs DIR` reads each worker's
// stdout/stderr file (logs/worker-<worker id>-[<job id>-]<pid>.out|.err,
// Ray 2.32 python/ray/_private/ray_logging get_worker_log_file_name) after
// the driver's log, each line with Ray's own prefix "(<actor> pid=<pid>) "
// (rank_progress.h), so its ranks, steps and failures are the actor's.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"

namespace jobmon::triage {

// The pid in a worker log's name; nullopt for any other file.
std::optional<int> RayWorkerLogPid(std::string_view file_name);

// One worker file's text as prefixed lines: Ray's markers (":actor_name:",
// ":task_name:", ":job_id:", python/ray/_private/ray_constants.py; written
// by _raylet.pyx, never forwarded) name the actor or task of the lines
// after them and are dropped, as Ray's log monitor does.
std::string PrefixRayWorkerLines(std::string_view text, int pid);

// Every worker file in `dir`, in name order: at most `per_file` bytes of
// each (its end) and `total` in all; a file that is not a regular one is
// skipped. An error when `dir` cannot be read.
Expected<std::string> ReadRayWorkerLogs(const std::string& dir, size_t per_file = 4 << 20,
                                        size_t total = 64 << 20);

}  // namespace jobmon::triage
