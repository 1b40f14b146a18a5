#pragma once
// Remote context (slurmstepd, as the job's user): tell the job where its
// diagnostics are. task_init runs in each task just before exec (the only
// hook where both the task's environment and its stdio are the job's): it
// sets JOBMON_DIAG_DIR, JOBMON_PROMETHEUS (the URL on the head node) and
// JOBMON_PROMETHEUS_NODE, and in the batch script prints
// one [diag] line into the job's own output.

#include <string>
#include <vector>

#include "spank_api.h"

namespace jobmon::spank {

int TaskInit(spank_t sp, const std::vector<std::string>& args);

}  // namespace jobmon::spank
