#include "spank/version_guard.h"

#include <optional>
#include <string>

#include "lifecycle/slurm_version.h"

namespace jobmon::spank {
namespace lc = jobmon::lifecycle;
namespace {

// One process is one context (slurmd, slurmstepd, sbatch, a prolog).
std::optional<bool> g_allowed;

std::optional<std::string> Refusal(spank_t sp) {
  char* major = nullptr;
  char* minor = nullptr;
  std::optional<lc::SlurmRelease> running;
  if (spank_get_item(sp, S_SLURM_VERSION_MAJOR, &major) == ESPANK_SUCCESS &&
      spank_get_item(sp, S_SLURM_VERSION_MINOR, &minor) == ESPANK_SUCCESS && major && minor) {
    running = lc::ParseSlurmRelease(major, minor);
  }
  return lc::SlurmVersionRefusal(lc::ReleaseOfVersionNumber(SLURM_VERSION_NUMBER), running);
}

void Log(const std::string& line) {
  switch (spank_context()) {
    case S_CTX_SLURMD:
      slurm_error("%s", line.c_str());
      break;
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
      slurm_verbose("%s", line.c_str());
      break;
    default:
      slurm_debug("%s", line.c_str());
      break;
  }
}

}  // namespace

bool DecideSlurmVersion(spank_t sp) {
  auto refusal = Refusal(sp);
  if (refusal) Log(*refusal);
  g_allowed = !refusal;
  return *g_allowed;
}

bool SlurmVersionAllowed(spank_t sp) {
  if (!g_allowed) g_allowed = !Refusal(sp);
  return *g_allowed;
}

}  // namespace jobmon::spank
