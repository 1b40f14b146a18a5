#include "spank/job_script.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "spank/diag_option.h"

namespace jobmon::spank {
namespace {

struct JobContext {
  uint32_t job_id = 0;
  std::string node;
};

JobContext ReadJobContext(spank_t sp) {
  JobContext context;
  if (spank_get_item(sp, S_JOB_ID, &context.job_id) != ESPANK_SUCCESS) {
    if (const char* id = std::getenv("SLURM_JOB_ID"))
      context.job_id = std::strtoul(id, nullptr, 10);
  }
  const char* node = std::getenv("SLURMD_NODENAME");
  context.node = node ? node : "?";
  return context;
}

void LogPhase(spank_t sp, const char* phase) {
  if (RequestedDiagMode(sp) != DiagMode::kOn) return;
  JobContext job = ReadJobContext(sp);
  slurm_info("[diag] job %u %s on node %s: diagnostics requested (--diag=on)", job.job_id, phase,
             job.node.c_str());
}

}  // namespace

int JobProlog(spank_t sp) {
  LogPhase(sp, "prolog");
  return 0;
}

int JobEpilog(spank_t sp) {
  LogPhase(sp, "epilog");
  return 0;
}

}  // namespace jobmon::spank
