#pragma once
// job_prolog / job_epilog (context job_script: slurmd runs them as root on
// every allocated node, before the first step and after the job). Both
// fail open: whatever goes wrong is logged with a [diag] prefix and
// recorded for the job's output; they never fail the job or drain the node.

#include <string>
#include <vector>

#include "spank_api.h"

namespace jobmon::spank {

int JobProlog(spank_t sp, const std::vector<std::string>& args);
int JobEpilog(spank_t sp, const std::vector<std::string>& args);

}  // namespace jobmon::spank
