#pragma once
// The plugin's Slurm version guard, decided here without Slurm: a SPANK
// plugin is built against one Slurm major.minor (its headers and ABI) and
// must not act under another. Slurm's loader also compares plugin_version;
// this guard makes the refusal one clear line of ours and holds wherever
// that check does not.

#include <optional>
#include <string>
#include <string_view>

namespace jobmon::lifecycle {

struct SlurmRelease {
  int major = 0;
  int minor = 0;
  bool operator==(const SlurmRelease&) const = default;
};

// SLURM_VERSION_NUMBER (0xMMmmuu) of the headers the plugin was built with.
SlurmRelease ReleaseOfVersionNumber(unsigned version_number);

// What spank_get_item(S_SLURM_VERSION_MAJOR / _MINOR) give: "22", "05".
// nullopt when either is not a plain number.
std::optional<SlurmRelease> ParseSlurmRelease(std::string_view major, std::string_view minor);

// "22.05".
std::string FormatRelease(SlurmRelease release);

// nullopt: the plugin may run (same major.minor, or the running version
// could not be read: Slurm's loader has compared plugin_version already).
// Otherwise the one line to log, and the plugin does nothing for the job.
std::optional<std::string> SlurmVersionRefusal(SlurmRelease built,
                                               std::optional<SlurmRelease> running);

}  // namespace jobmon::lifecycle
