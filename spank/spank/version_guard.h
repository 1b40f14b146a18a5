#pragma once
// The Slurm version guard at the SPANK boundary: the running Slurm's
// major.minor (spank_get_item, valid in every context) against the one the
// plugin was built for (lifecycle/slurm_version.h decides). On a mismatch
// the plugin logs one line and does nothing for the job; every callback
// still returns success (fail open).

#include "spank_api.h"

namespace jobmon::spank {

// slurm_spank_init, the first callback of every context: decides for this
// process and logs the refusal once: as an error in slurmd's context (once
// per slurmd start, not once per job), at verbose level in sbatch/salloc/
// srun (`-v` shows it) and at debug level in a job's prolog, epilog and
// steps. Returns whether the plugin may act.
bool DecideSlurmVersion(spank_t sp);

// Every later callback: this process's decision (made now, silently, if
// init did not run first).
bool SlurmVersionAllowed(spank_t sp);

}  // namespace jobmon::spank
