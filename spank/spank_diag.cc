// The SPANK entry points of spank_diag.so. Each is a one-line trampoline
// into the C++ code of its context; nothing may throw across this boundary
// (an exception reaching slurmstepd or slurmd kills it), and node-side
// callbacks always return 0: a negative return would fail the job or drain
// the node, and the plugin fails open.

#include <exception>
#include <string>
#include <vector>

#include "spank/diag_option.h"
#include "spank/job_script.h"
#include "spank/job_task.h"
#include "spank/version_guard.h"
#include "spank_api.h"

extern "C" {
// Explicit C linkage: SPANK_PLUGIN() would give these internal linkage in C++.
extern const char plugin_name[] = "diag";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

// The Slurm this build's headers are, as text in the .so, so `jobmon check`
// can read it from the file without loading it (cli/slurm_upgrade.h).
#define JOBMON_STR2(x) #x
#define JOBMON_STR(x) JOBMON_STR2(x)
[[gnu::used]] extern const char jobmon_slurm_built_for[] =
    "jobmon-spank-built-for-slurm=" JOBMON_STR(SLURM_VERSION_NUMBER) ";";

namespace {

template <typename Fn>
int Guarded(const char* where, int on_exception, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    slurm_error("[diag] %s: internal error: %s; diagnostics disabled for this job", where,
                e.what());
  } catch (...) {
    slurm_error("[diag] %s: unknown internal error; diagnostics disabled for this job", where);
  }
  return on_exception;
}

std::vector<std::string> Args(int ac, char** av) {
  std::vector<std::string> args;
  for (int i = 0; i < ac; ++i) args.emplace_back(av[i]);
  return args;
}

}  // namespace

extern "C" {

// --diag stays registered when the guard refuses (a Slurm whose plugin loader
// let this build in but whose version the guard does not accept): a script
// that passes it still submits and runs, without diagnostics. Under another
// Slurm series the loader itself refuses the plugin ("Incompatible Slurm
// plugin ... version") before any of this runs, and --diag=on is then an
// unrecognized option: the package is rebuilt for the new series before
// Slurm is upgraded (README "Upgrading Slurm"; `jobmon check` says so).
int slurm_spank_init(spank_t sp, int /*ac*/, char** /*av*/) {
  return Guarded("init", 0, [&] {
    jobmon::spank::DecideSlurmVersion(sp);
    return jobmon::spank::RegisterDiagOption(sp);
  });
}

int slurm_spank_job_prolog(spank_t sp, int ac, char** av) {
  Guarded("job_prolog", 0, [&] {
    if (!jobmon::spank::SlurmVersionAllowed(sp)) return 0;
    return jobmon::spank::JobProlog(sp, Args(ac, av));
  });
  return 0;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
  Guarded("job_epilog", 0, [&] {
    if (!jobmon::spank::SlurmVersionAllowed(sp)) return 0;
    return jobmon::spank::JobEpilog(sp, Args(ac, av));
  });
  return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  Guarded("task_init", 0, [&] {
    if (!jobmon::spank::SlurmVersionAllowed(sp)) return 0;
    return jobmon::spank::TaskInit(sp, Args(ac, av));
  });
  return 0;
}

}  // extern "C"
