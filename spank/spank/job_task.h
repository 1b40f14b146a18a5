#pragma once
// Remote context (slurmstepd, as the job's user): tell the job where its
// diagnostics are. user_init sets JOBMON_DIAG_DIR and JOBMON_PROMETHEUS in
// every step's environment; task_init prints one [diag] line into the batch
// script's own output.

#include <string>
#include <vector>

#include "spank_api.h"

namespace jobmon::spank {

int UserInit(spank_t sp, const std::vector<std::string>& args);
int TaskInit(spank_t sp, const std::vector<std::string>& args);

}  // namespace jobmon::spank
