#pragma once
// The --diag[=on|off] and --diag-on-hang=... options of sbatch, salloc and srun.

#include <optional>

#include "jobmon/common/diag_option.h"
#include "spank_api.h"

namespace jobmon::spank {

// Registers --diag with spank_option_register() in every context (the static
// spank_options[] table is not offered by sbatch/salloc on Slurm 22.05 and
// breaks spank_option_getopt in prolog/epilog). Returns 0 even if
// registration fails: the plugin fails open.
int RegisterDiagOption(spank_t sp);

// The mode this job asked for, read in prolog/epilog (job_script) context;
// nullopt when the option was not given (the cluster default applies).
std::optional<DiagMode> RequestedDiagMode(spank_t sp);

// --diag-on-hang's value in prolog/epilog context; notify when not given.
OnHang RequestedOnHang(spank_t sp);

}  // namespace jobmon::spank
