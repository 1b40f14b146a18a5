#include "spank/diag_option.h"

#include <cstdlib>
#include <string>

namespace jobmon::spank {
namespace {

constexpr int kDiagOptionValue = 1;

// Runs in sbatch/salloc/srun when the user gives --diag (and again in
// remote contexts): rejecting a bad value here stops the submission with a
// clear message, before the job exists.
int OnDiagOption(int /*val*/, const char* optarg, int /*remote*/) noexcept {
  try {
    auto mode = ParseDiagOption(optarg ? optarg : "");
    if (!mode) {
      slurm_error("[diag] %s", mode.error().message.c_str());
      return -1;
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

spank_option MakeDiagOption() {
  static char name[] = "diag";
  static char arginfo[] = "on|off";
  static char usage[] =
      "Per-job observability: start a job-local Prometheus and per-node exporters "
      "at job start and archive the TSDB at job end (on|off; --diag alone means on).";
  return spank_option{name, arginfo, usage, 2, kDiagOptionValue, OnDiagOption};
}

}  // namespace

int RegisterDiagOption(spank_t sp) {
  spank_option option = MakeDiagOption();
  spank_err_t rc = spank_option_register(sp, &option);
  if (rc != ESPANK_SUCCESS) {
    slurm_error("[diag] cannot register --diag: %s", spank_strerror(rc));
  }
  return 0;
}

std::optional<DiagMode> RequestedDiagMode(spank_t sp) {
  spank_option option = MakeDiagOption();
  char* optarg = nullptr;
  std::string value;
  if (spank_option_getopt(sp, &option, &optarg) == ESPANK_SUCCESS) {
    value = optarg ? optarg : "";
  } else if (const char* env = std::getenv("SPANK__SLURM_SPANK_OPTION_diag_diag")) {
    // Where getopt is unavailable, the variable it reads is still there.
    value = env;
  } else {
    return std::nullopt;
  }
  auto mode = ParseDiagOption(value);
  return mode ? *mode : DiagMode::kOff;
}

}  // namespace jobmon::spank
