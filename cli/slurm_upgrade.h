#pragma once
// `jobmon check` before and after a Slurm upgrade: the Slurm a spank_diag.so
// was built for (a marker spank/spank_diag.cc puts in the file, read without
// loading it) against the Slurm that runs here (`sbatch --version`,
// `slurmd -V`). Slurm's own plugin loader refuses a SPANK plugin of another
// major.minor ("Incompatible Slurm plugin ... version"), and --diag=on then
// becomes an unrecognized option: every job that asks for it is refused at
// submit. Same series, another patch release: loaded and run.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::cli {

// Slurm's SLURM_VERSION_NUMBER (0xMMmmuu) from the plugin's marker in
// `contents`; nullopt when there is none (another build, not ours).
std::optional<uint32_t> PluginSlurmVersion(std::string_view contents);
// The same read from a file (at most 64 MiB of it); nullopt when unreadable.
std::optional<uint32_t> ReadPluginSlurmVersion(const std::string& path);

std::string FormatSlurmVersion(uint32_t version);  // "22.05.8"

struct RunningSlurm {
  std::string program;  // sbatch, slurmd
  uint32_t version = 0;
};
// Asks `sbatch --version` and `slurmd -V` (5 s each; read by
// slurm::ParseSlurmVersion); those not found or not answering are left out.
std::vector<RunningSlurm> AskRunningSlurm();

// One problem line per running program of another series than the plugin's.
std::vector<std::string> SlurmUpgradeProblems(const std::string& where, const std::string& plugin,
                                              uint32_t built_for,
                                              const std::vector<RunningSlurm>& running);

}  // namespace jobmon::cli
