#include "spank/diag_option.h"

#include <cstdlib>
#include <optional>
#include <string>

namespace jobmon::spank {
namespace {

constexpr int kDiagOptionValue = 1;
constexpr int kOnHangOptionValue = 2;

// Runs in sbatch/salloc/srun when the user gives the option (and again in
// remote contexts): rejecting a bad value here stops the submission with a
// clear message, before the job exists. `Parse`: the option's parser
// (common/include/jobmon/common/diag_option.h).
template <auto Parse>
int CheckValue(int /*val*/, const char* optarg, int /*remote*/) noexcept {
  try {
    auto value = Parse(optarg ? optarg : "");
    if (!value) {
      slurm_error("[diag] %s", value.error().message.c_str());
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
  return spank_option{name, arginfo, usage, 2, kDiagOptionValue, CheckValue<ParseDiagOption>};
}

spank_option MakeOnHangOption() {
  static char name[] = "diag-on-hang";
  static char arginfo[] = "notify|signal|requeue|cancel";
  static char usage[] =
      "What jobmon's monitor may do when this --diag job hangs, within what the cluster's "
      "admins allow: notify (the default: an alert only), signal (send the job's steps the "
      "checkpoint signal), requeue (signal, wait for the checkpoint, requeue without the node "
      "that stopped first), cancel (signal, wait, cancel).";
  return spank_option{name, arginfo, usage, 1, kOnHangOptionValue, CheckValue<ParseOnHang>};
}

// The option's value in prolog/epilog context, as RequestedDiagMode reads --diag.
std::optional<std::string> OptionValue(spank_t sp, spank_option option, const char* env_name) {
  char* optarg = nullptr;
  if (spank_option_getopt(sp, &option, &optarg) == ESPANK_SUCCESS) return optarg ? optarg : "";
  // Where getopt is unavailable, the variable it reads is still there.
  if (const char* env = std::getenv(env_name)) return env;
  return std::nullopt;
}

}  // namespace

int RegisterDiagOption(spank_t sp) {
  for (spank_option option : {MakeDiagOption(), MakeOnHangOption()}) {
    spank_err_t rc = spank_option_register(sp, &option);
    if (rc != ESPANK_SUCCESS) {
      slurm_error("[diag] cannot register --%s: %s", option.name, spank_strerror(rc));
    }
  }
  return 0;
}

OnHang RequestedOnHang(spank_t sp) {
  auto value = OptionValue(sp, MakeOnHangOption(), "SPANK__SLURM_SPANK_OPTION_diag_diag_on_hang");
  if (!value) return OnHang::kNotify;
  auto choice = ParseOnHang(*value);
  return choice ? *choice : OnHang::kNotify;
}

std::optional<DiagMode> RequestedDiagMode(spank_t sp) {
  auto value = OptionValue(sp, MakeDiagOption(), "SPANK__SLURM_SPANK_OPTION_diag_diag");
  if (!value) return std::nullopt;
  auto mode = ParseDiagOption(*value);
  return mode ? *mode : DiagMode::kOff;
}

}  // namespace jobmon::spank
