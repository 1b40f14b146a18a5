#include "monitor_commands.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_common.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/run_command.h"
#include "jobmon/common/user_file.h"
#include "jobmon/monitor/api_protocol.h"
#include "jobmon/monitor/api_server.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/jobmon_config.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"
#include "status_view.h"

namespace jobmon::cli {
namespace {

using monitor::JobRecord;
using nlohmann::json;

struct CommonArgs {
  std::string config_path;
  std::string db;
  std::string socket;
  bool json = false;
};

void AddCommon(CLI::App* cmd, CommonArgs& args) {
  cmd->add_option("--socket", args.socket,
                  "The daemon's API socket (default: monitor.api_socket); used when present");
  cmd->add_option("--db", args.db,
                  "Read the daemon's state database instead of its API (default: "
                  "monitor.state_db, when the socket is absent; needs read access: root or "
                  "the daemon's group)");
  cmd->add_option("-c,--config", args.config_path, kConfigOptionHelp);
  AddJsonFlag(cmd, args.json);
}

Expected<monitor::MonitorConfig> Config(const CommonArgs& args) {
  auto loaded = monitor::LoadJobmonConfig(args.config_path);
  if (!loaded) return loaded.error();
  return loaded->monitor;
}

std::string DbPath(const CommonArgs& args, const monitor::MonitorConfig& config) {
  return args.db.empty() ? config.state_db : args.db;
}

std::string SocketPath(const CommonArgs& args, const monitor::MonitorConfig& config) {
  return args.socket.empty() ? config.api_socket : args.socket;
}

// The daemon's answer through its socket; nullopt when the API is not to be
// used (--db given, or no socket there). A daemon that cannot be reached is
// an error the caller reports before falling back to the database.
std::optional<Expected<json>> AskDaemon(const CommonArgs& args,
                                        const monitor::MonitorConfig& config,
                                        const monitor::api::Request& request) {
  const std::string socket = SocketPath(args, config);
  if (!args.db.empty() || socket.empty() || !PathExists(socket)) return std::nullopt;
  return monitor::CallApi(socket, request);
}

bool Refused(const json& answer, std::string_view code) {
  return !answer.value("ok", false) && answer.value("code", "") == code;
}

// ------------------------------------------------------------------ status

struct StatusArgs : CommonArgs {
  std::string job;
  std::optional<double> stall_min_seconds;  // default: monitor.stall.min_stall
};

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

int RunStatus(const StatusArgs& args) {
  auto config = Config(args);
  if (!config) return Fail("status", config.error().message);
  StatusInputs in;
  in.argument = args.job;
  in.now = NowSeconds();
  in.stall_rule = config->stall.rule();
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
    if (auto answer = AskDaemon(args, *config, {.op = "status", .job_id = in.job_id})) {
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
          if (auto r = monitor::api::IncidentFromJson(i)) in.incidents.push_back(*r);
        }
        if (a.contains("slurm_unreachable_since") && a["slurm_unreachable_since"].is_number())
          in.slurm_unreachable_since = a["slurm_unreachable_since"].get<double>();
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
  if (auto scanner = triage::LogScanner::Create({}); scanner && log) {
    auto facts = (*scanner)->ScanHeadAndTail(log->fd.get());
    if (facts) {
      triage::AnalysisContext context;
      context.stall_min_seconds = args.stall_min_seconds.value_or(config->stall.min_stall_seconds);
      context.stall_factor = config->stall.k;
      context.wall_clock_now = in.now;
      if (!slurm_state.empty()) context.slurm_state = slurm_state;
      if (in.slurm) context.slurm_exit_code = triage::ParseSlurmExitCode(in.slurm->exit_code);
      if (struct stat st{}; stat(log_path.c_str(), &st) == 0)
        context.log_mtime = static_cast<double>(st.st_mtim.tv_sec);
      in.report = triage::Analyze(*facts, context);
      in.report->log_path = log_path;
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

  const StatusView view = BuildStatusView(in);
  std::cout << (args.json ? JsonText(StatusJson(view)) : StatusText(view));
  return kOk;
}

// ------------------------------------------------------------------ list

struct ListArgs : CommonArgs {
  bool all = false;
};

int RunList(const ListArgs& args) {
  auto config = Config(args);
  if (!config) return Fail("list", config.error().message);
  json rows = json::array();
  std::string source = "database";
  if (auto answer =
          AskDaemon(args, *config, {.op = "list", .job_id = std::nullopt, .all = args.all})) {
    if (*answer && (**answer).value("ok", false)) {
      rows = (**answer).value("jobs", json::array());
      source = "api";
    } else {
      std::cerr << "jobmon list: the daemon's API: "
                << (*answer ? (**answer).value("error", "refused") : answer->error().message)
                << "; reading its database\n";
    }
  }
  if (source == "database") {
    const std::string db = DbPath(args, *config);
    if (!PathExists(db)) {
      return Fail("list",
                  "no API socket at " + SocketPath(args, *config) + " and no state database at " +
                      db + " (is slurm_job_monitor running? --socket or --db names another)",
                  kFailed);
    }
    auto store = monitor::StateStore::OpenReadOnly(db);
    if (!store) return Fail("list", store.error().message, kFailed);
    auto jobs = (*store)->ListJobs();
    if (!jobs) return Fail("list", jobs.error().message, kFailed);
    for (const JobRecord& j : *jobs) {
      if (j.ended_at && !args.all) continue;
      auto p = (*store)->GetProgress(j.job_id);
      auto open = (*store)->OpenIncidentOf(j.job_id);
      rows.push_back(
          monitor::api::ListRow(j, p && *p ? **p : std::optional<monitor::ProgressRecord>{},
                                open && *open ? **open : std::optional<monitor::IncidentRecord>{}));
    }
  }
  if (args.json) {
    std::cout << JsonText({{"schema", "jobmon.list/v1"}, {"source", source}, {"jobs", rows}});
    return kOk;
  }
  std::cout << fmt::format("{:<8} {:<20} {:<10} {:<9} {:<11} {:<9} {:>9}  {}\n", "JOB", "NAME",
                           "USER", "SOURCE", "SLURM", "PHASE", "STEP", "INCIDENT");
  for (const json& r : rows) {
    std::cout << fmt::format(
        "{:<8} {:<20} {:<10} {:<9} {:<11} {:<9} {:>9}  {}\n", r["job_id"].get<uint32_t>(),
        r["name"].get<std::string>().substr(0, 20), r["user"].get<std::string>().substr(0, 10),
        r["source"].get<std::string>(), r["slurm_state"].get<std::string>(),
        r["ended"].get<bool>() ? "ended"
                               : (r["phase"].is_null() ? "-" : r["phase"].get<std::string>()),
        r["last_step"].is_null() ? "-" : std::to_string(r["last_step"].get<int64_t>()),
        r["open_incident"].is_null() ? (r["final_class"].get<std::string>().empty()
                                            ? "-"
                                            : "ended: " + r["final_class"].get<std::string>())
                                     : r["open_incident"].get<std::string>());
  }
  if (rows.empty())
    std::cout << "(no jobs" << (args.all ? "" : " being followed; --all shows ended ones") << ")\n";
  return kOk;
}

// ------------------------------------------------------------------ watch

struct WatchArgs : CommonArgs {
  uint32_t job_id = 0;
};

int RunWatch(const WatchArgs& args) {
  auto config = Config(args);
  if (!config) return Fail("watch", config.error().message);
  const std::string db = DbPath(args, *config);
  std::string source = "database";
  if (auto answer = AskDaemon(args, *config, {.op = "watch", .job_id = args.job_id})) {
    if (*answer && (**answer).value("ok", false)) {
      source = "api";
    } else if (*answer &&
               (Refused(**answer, "forbidden") || Refused(**answer, "too_many_watches"))) {
      return Fail("watch", (**answer).value("error", "refused"), kFailed);
    } else {
      std::cerr << "jobmon watch: the daemon's API: "
                << (*answer ? (**answer).value("error", "refused") : answer->error().message)
                << "; writing into its database\n";
    }
  }
  if (source == "database") {
    if (!PathExists(db)) {
      return Fail("watch",
                  "no API socket at " + SocketPath(args, *config) + " and no state database at " +
                      db + " (start slurm_job_monitor first, or --socket / --db)",
                  kFailed);
    }
    auto store = monitor::StateStore::Open(db);
    if (!store) return Fail("watch", store.error().message, kFailed);
    if (auto added = (*store)->AddWatch(args.job_id, NowSeconds()); !added) {
      return Fail("watch", added.error().message, kFailed);
    }
  }
  if (args.json) {
    json out = {{"job_id", args.job_id}, {"watch", "requested"}, {"source", source}};
    if (source == "database") out["db"] = db;
    std::cout << JsonText(out, -1);
  } else {
    std::cout << "job " << args.job_id
              << ": the monitor follows it from its next Slurm poll (jobmon status " << args.job_id
              << ")\n";
  }
  return kOk;
}

}  // namespace

std::function<int()> AddStatusCommand(CLI::App& app) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "One job: state, class, progress projection, last and expected step, incidents with "
      "evidence, Prometheus location and tunnel, archive. From the monitor's database, or from "
      "the log when no daemon follows the job. Through the daemon's socket API when it is "
      "there: a user sees their own jobs, root and monitor.admin_group every job; else "
      "from its database (root or the daemon's group).");
  cmd->add_option("job", args->job, "Slurm job id (or a log file)")->required();
  cmd->add_option("--stall-min-seconds", args->stall_min_seconds,
                  "For the projection: stalled after max(k x p99, this) (default: "
                  "monitor.stall.min_stall, 60)");
  AddCommon(cmd, *args);
  return Runner(cmd, args, RunStatus);
}

std::function<int()> AddListCommand(CLI::App& app) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* cmd = app.add_subcommand(
      "list",
      "Every job the monitor follows, one line each (through the daemon's API: a user's own "
      "jobs; root and monitor.admin_group: all).");
  cmd->add_flag("--all", args->all, "Include ended jobs");
  AddCommon(cmd, *args);
  return Runner(cmd, args, RunList);
}

std::function<int()> AddWatchCommand(CLI::App& app) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "Ask the monitor to follow a job that neither --diag nor [monitor.select] covers (through "
      "the daemon's API a user may ask for their own jobs only).");
  cmd->add_option("job", args->job_id, "Slurm job id")->required();
  AddCommon(cmd, *args);
  return Runner(cmd, args, RunWatch);
}

}  // namespace jobmon::cli
