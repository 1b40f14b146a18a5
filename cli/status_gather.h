#pragma once
// What `jobmon status` shows, gathered: the daemon's record (its API, else
// its database), Slurm's job, the job's log triaged as the job's user, and
// its diag dir's manifest. The view built from it: status_view.h.

#include <optional>
#include <string>

#include "daemon_access.h"
#include "status_view.h"

namespace jobmon::cli {

struct StatusArgs : CommonArgs {
  std::string job;
  std::optional<double> stall_min_seconds;  // default: [stall] min_stall
  std::string html;  // --html FILE: also the report with the incident's chart
};

// kOk with `in` filled; else the exit code, the reason said on stderr.
int GatherStatus(const StatusArgs& args, StatusInputs& in);

}  // namespace jobmon::cli
