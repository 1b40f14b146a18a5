#pragma once
// The environment a program gets when it runs as someone else: a helper
// RunCommand starts as the job's user (CommandOptions::run_as), and every
// program `jobmon diagnose` starts after it became the job's user
// (BecomeUser: gnuplot, squeue). Root's environment may hold secrets
// (JOBMON_STORE_TOKEN, the alert receivers' tokens); only these variables,
// none of them a secret, go across.

#include <string>
#include <vector>

namespace jobmon {

// The variables kept, when set: where programs are, the locale, the time
// zone, and which slurm.conf Slurm's commands read.
inline constexpr const char* kMinimalEnvironmentNames[] = {"PATH", "LANG", "LC_ALL", "TZ",
                                                           "SLURM_CONF"};
inline constexpr const char* kDefaultPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

// "K=V" lines of `environment` (a null-terminated array like environ) for
// the names above alone; PATH is the default above when unset.
std::vector<std::string> MinimalEnvironment(const char* const* environment);
// Of this process's environment.
std::vector<std::string> MinimalEnvironment();

// Replaces this process's environment by MinimalEnvironment(), for every
// program it starts from now on. Not thread-safe (setenv): for a process
// that is still single-threaded.
void KeepMinimalEnvironment();

}  // namespace jobmon
