#pragma once
// job_prolog / job_epilog (context job_script: slurmd runs them as root on
// every allocated node, before the first step and after the job).

#include "spank_api.h"

namespace jobmon::spank {

int JobProlog(spank_t sp);
int JobEpilog(spank_t sp);

}  // namespace jobmon::spank
