#include "slurm_upgrade.h"

#include <chrono>
#include <fstream>

#include "jobmon/common/run_command.h"
#include "jobmon/slurm/client.h"

namespace jobmon::cli {
namespace {

constexpr std::string_view kMarker = "jobmon-spank-built-for-slurm=0x";
constexpr size_t kMaxPluginBytes = size_t{64} << 20;

uint32_t Series(uint32_t version) { return version >> 8; }

}  // namespace

std::optional<uint32_t> PluginSlurmVersion(std::string_view contents) {
  const size_t at = contents.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t start = at + kMarker.size();
  const size_t end = contents.find(';', start);
  if (end == std::string_view::npos || end - start == 0 || end - start > 8) return std::nullopt;
  uint32_t value = 0;
  for (char c : contents.substr(start, end - start)) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<uint32_t>(digit);
  }
  return value;
}

std::optional<uint32_t> ReadPluginSlurmVersion(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string contents(kMaxPluginBytes, '\0');
  in.read(contents.data(), static_cast<std::streamsize>(contents.size()));
  contents.resize(static_cast<size_t>(in.gcount()));
  return PluginSlurmVersion(contents);
}

std::string FormatSlurmVersion(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "%u.%02u.%u", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
  return text;
}

std::vector<RunningSlurm> AskRunningSlurm() {
  std::vector<RunningSlurm> out;
  const std::pair<const char*, const char*> asks[] = {{"sbatch", "--version"}, {"slurmd", "-V"}};
  for (const auto& [program, flag] : asks) {
    auto result = RunCommand({program, flag}, std::chrono::seconds(5));
    if (!result || result->exit_code != 0) continue;
    if (auto v = slurm::ParseSlurmVersion(result->output)) out.push_back({program, *v});
  }
  return out;
}

std::vector<std::string> SlurmUpgradeProblems(const std::string& where, const std::string& plugin,
                                              uint32_t built_for,
                                              const std::vector<RunningSlurm>& running) {
  std::vector<std::string> problems;
  for (const RunningSlurm& r : running) {
    if (Series(r.version) == Series(built_for)) continue;
    problems.push_back(
        where + ": " + plugin + " was built for Slurm " + FormatSlurmVersion(built_for) + ", but " +
        r.program + " here is " + FormatSlurmVersion(r.version) +
        ": Slurm refuses a plugin of another series (\"Incompatible Slurm plugin ... "
        "version\"), so --diag is an unrecognized option and every job that asks for it is "
        "refused at submit; rebuild and install the jobmon package for " +
        FormatSlurmVersion(r.version).substr(0, 5) +
        " (scripts/package.sh against its headers) before Slurm runs it");
  }
  return problems;
}

}  // namespace jobmon::cli
