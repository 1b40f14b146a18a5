// job_epilog: stop what this job's prolog started on this node (nothing
// else: every pid is checked against its recorded start time), then on the
// head node archive the TSDB, holding the node at most `epilog_wait`.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "jobmon/common/atomic_file.h"
#include "jobmon/common/daemon.h"
#include "jobmon/common/fs_identity.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/manifest.h"
#include "jobmon/common/text_lines.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"
#include "lifecycle/local_tsdb.h"
#include "lifecycle/plugin_config.h"
#include "spank/job_script.h"
#include "spank/node_files.h"

namespace jobmon::spank {
namespace lc = jobmon::lifecycle;
namespace fs = std::filesystem;

namespace {

// The manifest lives in the user's diag dir: written with their rights.
void WriteAsUser(const DiagLayout& layout, const Manifest& m, uid_t uid, gid_t gid) {
  FsIdentity as_user(uid, gid);
  (void)WriteManifest(layout.manifest(), m);
}

// Stops one recorded daemon; says what happened, for the log.
std::string Stop(const std::string& pid_file, const char* what, std::chrono::milliseconds grace) {
  auto record = ReadPidRecord(pid_file);
  if (!record) return std::string(what) + ": no pid record";
  auto outcome = StopDaemon(*record, grace);
  if (!outcome) return std::string(what) + ": " + outcome.error().message;
  return std::string(what) + " " + ToString(*outcome);
}

void Archive(const lc::PluginConfig& config, const lc::JobEnv& job, const DiagLayout& layout,
             const lc::RunDir& run, bool prometheus_clean, gid_t gid) {
  // Everything in the diag dir is the user's: read as them, never as root.
  const UserFileOptions as_user{.user = JobUser{job.uid, gid}, .kind = UserFileKind::kRegular};
  auto manifest = ReadManifest(layout.manifest(), as_user);
  if (!manifest) {
    slurm_error("[diag] job %u: %s; not archiving", job.job_id, manifest.error().message.c_str());
    return;
  }
  Manifest m = *manifest;
  m.ended_at = IsoNow();
  // What every node noted (an exporter that gave up, ...), once each.
  for (const NodeNote& note : ReadDegradedNotes(layout, *as_user.user)) {
    std::string noted = note.node == job.node ? note.line : note.node + ": " + note.line;
    if (std::find(m.degraded.begin(), m.degraded.end(), noted) == m.degraded.end() &&
        std::find(m.degraded.begin(), m.degraded.end(), note.line) == m.degraded.end()) {
      m.degraded.push_back(noted);
    }
  }
  if (!prometheus_clean) m.degraded.push_back("Prometheus did not exit cleanly (killed)");
  // Where the prolog put it (its root-owned record; older prologs: the diag dir).
  std::string tsdb = ReadFirstLine(run.tsdb_dir());
  if (tsdb.empty()) tsdb = layout.tsdb_dir();
  const bool local = !lc::IsInside(tsdb, layout.dir);
  bool have_tsdb = [&] {
    FsIdentity as_job_user(job.uid, gid);
    std::error_code ec;
    return fs::is_directory(fs::symlink_status(tsdb, ec)) && fs::is_directory(tsdb, ec);
  }();
  if (!config.archive || m.prometheus_port == 0 || !have_tsdb) {
    m.state = "ended";
    WriteAsUser(layout, m, job.uid, gid);
    return;
  }
  m.state = "archiving";
  WriteAsUser(layout, m, job.uid, gid);
  std::vector<std::string> argv = {config.archiver,
                                   "--diag-dir",
                                   layout.dir,
                                   "--level",
                                   std::to_string(config.compression_level),
                                   "--prometheus",
                                   config.prometheus,
                                   "--tsdb-dir",
                                   tsdb};
  if (config.keep_tsdb) argv.push_back("--keep-tsdb");
  // Detached and as the job's user: it may outlive the epilog, and the TSDB
  // and the archive are theirs. Its log is opened here, as theirs.
  auto log = OpenDaemonLog(layout.logs_dir() + "/archive.log", *as_user.user);
  if (!log) {
    slurm_error("[diag] job %u: archiver log: %s; its output is discarded", job.job_id,
                log.error().message.c_str());
  }
  DaemonSpec spec{argv, DaemonEnvironment(), "", layout.dir, job.uid, gid, log ? log->get() : -1};
  auto archiver = SpawnDaemon(spec);
  if (!archiver) {
    m.state = "archive_failed";
    m.archive_error = archiver.error().message;
    WriteAsUser(layout, m, job.uid, gid);
    slurm_error("[diag] job %u: archiver: %s", job.job_id, archiver.error().message.c_str());
    return;
  }
  (void)WriteFileAtomically(run.archiver_pid(), FormatPidRecord(*archiver));
  auto deadline = std::chrono::steady_clock::now() + config.epilog_wait;
  while (IsSameProcessRunning(*archiver) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (IsSameProcessRunning(*archiver)) {
    slurm_info("[diag] job %u: archiving continues in the background (pid %d); see %s", job.job_id,
               archiver->pid, layout.manifest().c_str());
    return;
  }
  // The archiver, as the user, emptied the local TSDB dir but cannot remove
  // it from its root-owned parent; rmdir removes only an empty directory
  // (never a symlink's target). Detached archivers: the next prolog sweeps.
  if (local && !config.keep_tsdb) rmdir(tsdb.c_str());
  auto after = ReadManifest(layout.manifest(), as_user);
  slurm_info("[diag] job %u: TSDB %s (%s)", job.job_id,
             after ? after->state.c_str() : "state unknown", layout.archive().c_str());
}

}  // namespace

int JobEpilog(spank_t /*sp*/, const std::vector<std::string>& args) {
  auto config = lc::ParsePluginConfig(args);
  if (!config) {
    slurm_error("[diag] %s; the plugin is disabled for this job", config.error().message.c_str());
    return 0;
  }
  auto job = lc::ReadJobEnv([](const char* name) { return std::getenv(name); });
  if (!job) return 0;  // not a job of ours to clean up
  lc::RunDir run = lc::RunDirFor(*config, job->node, job->job_id);
  // The run dir is the prolog's record: without it this node started nothing.
  std::error_code ec;
  if (!fs::is_directory(run.dir, ec)) return 0;
  std::string diag_dir = ReadFirstLine(run.diag_dir());
  DiagLayout layout{diag_dir};
  gid_t gid = JobGroup(*job);

  std::string exporter = Stop(run.exporter_pid(), "exporter", std::chrono::seconds(5));
  // One line, written by the supervisor as its user (maybe the job's).
  const std::string status(FirstLine(ReadExporterStatus(run)));
  if (status.rfind("gave up", 0) == 0) {
    std::string line = "exporter crashed repeatedly and was not restarted (" + status + ")";
    slurm_error("[diag] job %u node %s: %s", job->job_id, job->node.c_str(), line.c_str());
    if (!diag_dir.empty()) {
      FsIdentity as_user(job->uid, gid);
      AppendLine(DegradedNotesPath(layout, job->node), line);
    }
  }
  std::string summary = exporter;
  if (job->is_head() && !diag_dir.empty() && fs::exists(run.prometheus_pid(), ec)) {
    // Prometheus writes its head block on SIGTERM; give it time to do so.
    auto record = ReadPidRecord(run.prometheus_pid());
    auto outcome = record ? StopDaemon(*record, std::chrono::seconds(20))
                          : Expected<StopOutcome>(Error{"no pid record"});
    bool clean =
        outcome && (*outcome == StopOutcome::kTerminated || *outcome == StopOutcome::kNotRunning);
    summary += std::string(", prometheus ") +
               (outcome ? ToString(*outcome) : outcome.error().message.c_str());
    Archive(*config, *job, layout, run, clean, gid);
  } else if (job->is_head() && !diag_dir.empty()) {
    Archive(*config, *job, layout, run, true, gid);
  }
  slurm_info("[diag] job %u node %s: stopped (%s)", job->job_id, job->node.c_str(),
             summary.c_str());
  RemoveRunDir(run);
  return 0;
}

}  // namespace jobmon::spank
