#include "lifecycle/slurm_version.h"

#include <cstdio>

#include "jobmon/common/whole_number.h"

namespace jobmon::lifecycle {

SlurmRelease ReleaseOfVersionNumber(unsigned version_number) {
  return {static_cast<int>((version_number >> 16) & 0xff),
          static_cast<int>((version_number >> 8) & 0xff)};
}

std::optional<SlurmRelease> ParseSlurmRelease(std::string_view major, std::string_view minor) {
  auto a = NonNegativeNumber<int>(major), b = NonNegativeNumber<int>(minor);
  if (!a || !b) return std::nullopt;
  return SlurmRelease{*a, *b};
}

std::string FormatRelease(SlurmRelease release) {
  char text[32];
  std::snprintf(text, sizeof text, "%d.%02d", release.major, release.minor);
  return text;
}

std::optional<std::string> SlurmVersionRefusal(SlurmRelease built,
                                               std::optional<SlurmRelease> running) {
  if (!running || *running == built) return std::nullopt;
  return "[diag] spank_diag: built for Slurm " + FormatRelease(built) + ", running under " +
         FormatRelease(*running) +
         ": disabled (rebuild the plugin against this Slurm's headers); jobs run without --diag "
         "diagnostics";
}

}  // namespace jobmon::lifecycle
