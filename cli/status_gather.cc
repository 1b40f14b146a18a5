#include "status_gather.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "jobmon/common/base64.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/common/user_file.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage_job.h"

namespace jobmon::cli {
namespace {

using nlohmann::json;

// Opens a file of the job (its log) as the daemon does: through the opener
// (no symlink, FIFO or device; bounded), as the job's user. Without a known
// user root reads nothing of the job: a log linked to a root-only file
// would show that file to whoever may run jobmon as root (sudo rules).
Expected<UserFile> OpenJobFile(const std::string& path, const std::optional<JobUser>& user) {
  if (!user && geteuid() == 0) {
    return Error{path + ": not read: the job's user is not known (Slurm no longer lists the job)"};
  }
  return OpenUserFile(path, {.user = user});
}

}  // namespace

int GatherStatus(const StatusArgs& args, StatusInputs& in) {
  auto config = Config(args);
  if (!config) return Fail("status", config.error().message);
  in.argument = args.job;
  in.now = NowSeconds();
  in.stall_rule = config->stall;
  std::optional<Expected<UserFile>> typed_log;  // a log path given instead of a job id
  if (!args.job.empty() && args.job.find_first_not_of("0123456789") == std::string::npos) {
    // Range-checked: a cast would show job 1 for 4294967297.
    auto parsed = triage::ParseJobId(args.job);
    if (!parsed) return Fail("status", parsed.error().message);
    in.job_id = *parsed;
  }

  in.db = DbPath(args, *config);
  bool answered = false;  // by the daemon's API (found or not)
  if (in.job_id) {
    if (auto answer = AskDaemon(
            args, *config, {.op = "status", .job_id = in.job_id, .chart = !args.html.empty()})) {
      if (!*answer) {
        std::cerr << "jobmon status: the daemon's API: " << answer->error().message
                  << "; reading its database\n";
      } else if (Refused(**answer, "forbidden")) {
        // Another user's job: nothing of it is read here either.
        return Fail("status", (**answer).value("error", "refused"), kFailed);
      } else if ((**answer).value("ok", false)) {
        const json& a = **answer;
        auto record = monitor::api::JobFromJson(a["job"]);
        if (!record)
          return Fail("status", "the daemon's answer: " + record.error().message, kFailed);
        in.record = *record;
        if (a.contains("progress") && a["progress"].is_object()) {
          if (auto p = monitor::api::ProgressFromJson(a["progress"])) in.progress = *p;
        }
        for (const json& i : a.value("incidents", json::array())) {
          auto r = monitor::api::IncidentFromJson(i);
          if (!r) continue;
          in.incidents.push_back(*r);
          auto steps = monitor::api::RecoveryStepsFromJson(i.value("recovery", json::array()));
          if (!steps.empty()) in.recovery[r->id] = std::move(steps);
        }
        in.recovery_held = a.value("recovery_held", false);
        if (a.contains("slurm_unreachable_since") && a["slurm_unreachable_since"].is_number())
          in.slurm_unreachable_since = a["slurm_unreachable_since"].get<double>();
        if (const json chart = a.value("chart", json()); chart.is_object()) {
          auto png = Base64Decode(chart.value("png_base64", ""));
          if (png && !png->empty()) in.chart = {{chart.value("incident_id", int64_t{0}), *png}};
        }
        in.db = SocketPath(args, *config);
        in.daemon_source = "api";
        answered = true;
      } else if (Refused(**answer, "not_found")) {
        answered = true;  // the daemon does not follow it: Slurm and the log say what they can
      } else {
        std::cerr << "jobmon status: the daemon's API: " << (**answer).value("error", "refused")
                  << "; reading its database\n";
      }
    }
  }
  if (in.job_id && !answered && PathExists(in.db)) {
    auto store = monitor::StateStore::OpenReadOnly(in.db);
    if (!store) {
      std::cerr << "jobmon status: " << store.error().message << "\n";
    } else {
      if (auto r = (*store)->GetJob(*in.job_id); r && *r) {
        in.record = **r;
        if (auto p = (*store)->GetProgress(*in.job_id); p && *p) in.progress = **p;
        if (auto i = (*store)->Incidents(*in.job_id)) in.incidents = *i;
        for (const auto& incident : in.incidents) {
          if (auto steps = (*store)->RecoverySteps(incident.id); steps && !steps->empty())
            in.recovery[incident.id] = *steps;
        }
        if (auto held = (*store)->RecoveryHeld(*in.job_id)) in.recovery_held = *held;
        if (!args.html.empty()) {
          if (auto chart = (*store)->LatestIncidentChart(*in.job_id); chart && *chart) {
            in.chart = **chart;
          }
        }
      }
      if (auto since = (*store)->GetDaemonState("slurm_unreachable_since"); since && *since)
        in.slurm_unreachable_since = std::strtod((*since)->c_str(), nullptr);
    }
  }
  if (in.job_id) in.slurm = triage::QuerySlurmJob(std::to_string(*in.job_id));
  if (in.record) {
    in.log_path = in.record->log_path;
    in.diag_dir = in.record->diag_dir;
  } else if (in.slurm) {
    in.log_path = in.slurm->std_out;
    std::string candidate = monitor::DiagDirFor(*in.slurm, config->diag_dir_pattern);
    if (PathExists(DiagLayout{candidate}.manifest())) in.diag_dir = candidate;
  } else if (!in.job_id && PathExists(args.job)) {
    // A path the caller typed is read with the caller's own rights; its
    // symlinks are the caller's choice, so they are resolved first (a FIFO
    // or device behind them is still refused by the opener, unopened).
    std::error_code ec;
    const std::string resolved = std::filesystem::canonical(args.job, ec).string();
    in.log_path = args.job;
    typed_log = OpenUserFile(ec ? in.log_path : resolved);
    if (!*typed_log) return Fail("status", typed_log->error().message);
  } else {
    return Fail("status", "job " + args.job + " is unknown: not in the daemon's database (" +
                              in.db + "), not known to Slurm, and not a log file");
  }
  const std::string slurm_state = in.slurm    ? in.slurm->state
                                  : in.record ? in.record->slurm_state
                                              : "";

  // The job's user: Slurm's uid (as the daemon reads), else the name the
  // daemon recorded.
  std::optional<JobUser> job_user;
  if (in.slurm) {
    job_user = JobUser{in.slurm->uid, in.slurm->gid};
  } else if (in.record) {
    job_user = LookUpJobUser(in.record->user);
  }

  // The projection from the log itself (as `jobmon triage` computes it).
  // The job's own log path (from the database or Slurm) is the job owner's
  // to choose: it is opened as that user, and only if a regular file.
  const std::string& log_path = in.log_path;
  Expected<UserFile> log = typed_log              ? std::move(*typed_log)
                           : PathExists(log_path) ? OpenJobFile(log_path, job_user)
                                                  : Expected<UserFile>(Error{"no log"});
  if (!log && PathExists(log_path)) std::cerr << "jobmon status: " << log.error().message << "\n";
  if (auto scanner = triage::LogScanner::Default(); scanner && log) {
    auto facts = (*scanner)->ScanHeadAndTail(log->fd.get());
    if (facts) {
      triage::JobContext job;
      job.log_path = log_path;
      job.analysis.stall_min_seconds =
          args.stall_min_seconds.value_or(config->stall.min_stall_seconds);
      job.analysis.stall_factor = config->stall.k;
      job.analysis.wall_clock_now = in.now;
      if (!slurm_state.empty()) job.slurm_state = slurm_state;
      if (in.slurm) job.slurm_exit_code = triage::ParseSlurmExitCode(in.slurm->exit_code);
      if (struct stat st{}; stat(log_path.c_str(), &st) == 0)
        job.analysis.log_mtime = static_cast<double>(st.st_mtim.tv_sec);
      in.report = triage::TriageJob(*facts, job);
    }
  }
  // The manifest is the user's file: read through the opener as the job's
  // user; the head node is Slurm's, the tunnel command is rebuilt, and only
  // checked values are shown.
  const std::string node_list = in.record  ? in.record->node_list
                                : in.slurm ? in.slurm->node_list
                                           : "";
  auto manifest = in.diag_dir.empty() || (!job_user && geteuid() == 0)
                      ? Expected<monitor::ManifestView>(Error{"not read"})
                      : monitor::ReadDiagManifest(in.diag_dir, job_user, node_list);
  if (manifest) in.manifest = *manifest;

  return kOk;
}

}  // namespace jobmon::cli
