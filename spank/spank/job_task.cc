#include "spank/job_task.h"

#include <cstdio>
#include <filesystem>
#include <optional>

#include "jobmon/common/manifest.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/plugin_config.h"
#include "spank/node_files.h"

namespace jobmon::spank {
namespace lc = jobmon::lifecycle;
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kBatchStep = 0xfffffffb;  // SLURM_BATCH_SCRIPT in <slurm/slurm.h>

struct Where {
  std::string diag_dir;
  std::optional<Manifest> manifest;
  std::vector<std::string> degraded;  // every node's
};

// What this node's prolog recorded, or nothing when it did not run for
// this job (option off, or plugin disabled).
std::optional<Where> Find(spank_t sp, const std::vector<std::string>& args) {
  auto config = lc::ParsePluginConfig(args);
  if (!config) return std::nullopt;
  uint32_t job_id = 0;
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return std::nullopt;
  char node[256] = "";
  if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS) {
    return std::nullopt;
  }
  // The task runs as the job's user already; the opener still keeps a
  // FIFO or device in the diag dir from hanging the job's start.
  JobUser user;
  if (spank_get_item(sp, S_JOB_UID, &user.uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &user.gid) != ESPANK_SUCCESS) {
    return std::nullopt;
  }
  lc::RunDir run = lc::RunDirFor(*config, node, job_id);
  std::error_code ec;
  if (!fs::is_directory(run.dir, ec)) return std::nullopt;
  Where where;
  where.diag_dir = ReadFirstLine(run.diag_dir());
  DiagLayout layout{where.diag_dir};
  if (auto manifest =
          ReadManifest(layout.manifest(), {.user = user, .kind = UserFileKind::kRegular})) {
    where.manifest = *manifest;
  }
  // This node's notes (kept even when the diag dir was unwritable), then
  // the other nodes' from the shared diag dir.
  for (const std::string& line : NonEmptyLines(ReadText(run.degraded()))) {
    where.degraded.push_back(std::string(node) + ": " + line);
  }
  for (const NodeNote& note : ReadDegradedNotes(layout, user)) {
    if (note.node != node) where.degraded.push_back(note.node + ": " + note.line);
  }
  return where;
}

}  // namespace

namespace {

void SetEnvironment(spank_t sp, const Where& where) {
  spank_setenv(sp, "JOBMON_DIAG_DIR", where.diag_dir.c_str(), 1);
  if (where.manifest && where.manifest->prometheus_port) {
    // A URL that works on the head node (and through the tunnel elsewhere).
    std::string url = "http://127.0.0.1:" + std::to_string(where.manifest->prometheus_port);
    spank_setenv(sp, "JOBMON_PROMETHEUS", url.c_str(), 1);
    spank_setenv(sp, "JOBMON_PROMETHEUS_NODE", where.manifest->head_node.c_str(), 1);
  }
}

}  // namespace

int TaskInit(spank_t sp, const std::vector<std::string>& args) {
  auto where = Find(sp, args);
  if (!where) return 0;
  SetEnvironment(sp, *where);
  uint32_t step = 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS || step != kBatchStep) return 0;
  std::string line = "[diag] ";
  if (where->manifest && where->manifest->prometheus_port) {
    const Manifest& m = *where->manifest;
    line += "Prometheus for job " + std::to_string(m.job_id) + " on " + m.head_node +
            " at 127.0.0.1:" + std::to_string(m.prometheus_port) + " (tunnel: " + m.tunnel_command +
            "); diag dir " + where->diag_dir;
  } else {
    line += "no Prometheus for this job; diag dir " + where->diag_dir;
  }
  if (!where->degraded.empty()) {
    line += "; degraded:";
    for (const std::string& d : where->degraded) line += " [" + d + "]";
  }
  // The task's stderr is the job's error (or output) file by now.
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  return 0;
}

}  // namespace jobmon::spank
