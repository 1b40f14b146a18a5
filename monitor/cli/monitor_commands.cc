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

#include "jobmon/common/diag_dir.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/run_command.h"
#include "jobmon/common/user_file.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/jobmon_config.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/report.h"
#include "jobmon/triage/slurm_jobs.h"
#include "jobmon/triage/stall_rule.h"
#include "jobmon/triage/triage.h"

namespace jobmon::cli {
namespace {

using monitor::IncidentRecord;
using monitor::JobRecord;
using monitor::ProgressRecord;
using nlohmann::json;

constexpr int kUsageError = 2;
constexpr const char* kStatusSchema = "jobmon.status/v1";

struct CommonArgs {
  std::string config_path;
  std::string db;
  bool json = false;
};

void AddCommon(CLI::App* cmd, CommonArgs& args) {
  cmd->add_option("--db", args.db, "The daemon's state database (default: monitor.state_db)");
  cmd->add_option("-c,--config", args.config_path, kConfigOptionHelp);
  cmd->add_flag("--json", args.json, "Machine-readable output");
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

Expected<monitor::MonitorConfig> Config(const CommonArgs& args) {
  auto loaded = monitor::LoadJobmonConfig(args.config_path);
  if (!loaded) return loaded.error();
  return loaded->monitor;
}

std::string DbPath(const CommonArgs& args, const monitor::MonitorConfig& config) {
  return args.db.empty() ? config.state_db : args.db;
}

json IncidentJson(const IncidentRecord& i) {
  return {{"id", i.id},
          {"class", i.klass},
          {"state", i.state},
          {"opened_at", i.opened_at},
          {"closed_at", i.closed_at ? json(*i.closed_at) : json(nullptr)},
          {"close_reason", i.close_reason},
          {"summary", i.summary},
          {"evidence", i.evidence},
          {"hosts", i.hosts}};
}

// ------------------------------------------------------------------ status

struct StatusArgs : CommonArgs {
  std::string job;
  std::optional<double> stall_min_seconds;  // default: monitor.stall.min_stall
};

std::optional<triage::SlurmJob> AskSlurm(const std::string& job_id) {
  // Slurm 22.05's squeue --json ignores -j: every job comes, this one is picked.
  auto result = RunCommand({"squeue", "--json"}, std::chrono::seconds(5), size_t{1} << 30);
  if (!result || result->exit_code != 0) return std::nullopt;
  auto jobs = triage::ParseSqueueJson(result->output);
  if (!jobs) return std::nullopt;
  for (const auto& job : *jobs) {
    if (std::to_string(job.job_id) == job_id) return job;
  }
  return std::nullopt;
}

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
  if (!config) {
    std::cerr << "jobmon status: " << config.error().message << "\n";
    return kUsageError;
  }
  const double now = Now();
  json out = {{"schema", kStatusSchema}, {"job_id", nullptr}, {"source", "log"}};
  std::optional<JobRecord> record;
  std::optional<ProgressRecord> progress;
  std::vector<IncidentRecord> incidents;
  std::string log_path, diag_dir, slurm_state;
  std::optional<Expected<UserFile>> typed_log;  // a log path given instead of a job id
  uint32_t job_id = 0;
  const bool numeric =
      !args.job.empty() && args.job.find_first_not_of("0123456789") == std::string::npos;
  if (numeric) {
    // Range-checked: a cast would show job 1 for 4294967297.
    auto parsed = triage::ParseJobId(args.job);
    if (!parsed) {
      std::cerr << "jobmon status: " << parsed.error().message << "\n";
      return kUsageError;
    }
    job_id = *parsed;
  }

  const std::string db = DbPath(args, *config);
  if (numeric && Exists(db)) {
    auto store = monitor::StateStore::OpenReadOnly(db);
    if (!store) {
      std::cerr << "jobmon status: " << store.error().message << "\n";
    } else {
      if (auto r = (*store)->GetJob(job_id); r && *r) {
        record = **r;
        if (auto p = (*store)->GetProgress(job_id); p && *p) progress = **p;
        if (auto i = (*store)->Incidents(job_id)) incidents = *i;
      }
    }
  }
  std::optional<triage::SlurmJob> slurm;
  if (numeric) slurm = AskSlurm(std::to_string(job_id));
  if (record) {
    out["source"] = "daemon";
    out["db"] = db;
    log_path = record->log_path;
    diag_dir = record->diag_dir;
    slurm_state = record->slurm_state;
  } else if (slurm) {
    log_path = slurm->std_out;
    slurm_state = slurm->state;
    std::string candidate = monitor::DiagDirFor(*slurm, config->diag_dir_pattern);
    if (Exists(DiagLayout{candidate}.manifest())) diag_dir = candidate;
  } else if (!numeric && Exists(args.job)) {
    // A path the caller typed is read with the caller's own rights; its
    // symlinks are the caller's choice, so they are resolved first (a FIFO
    // or device behind them is still refused by the opener, unopened).
    std::error_code ec;
    const std::string resolved = std::filesystem::canonical(args.job, ec).string();
    log_path = args.job;
    typed_log = OpenUserFile(ec ? log_path : resolved);
    if (!*typed_log) {
      std::cerr << "jobmon status: " << typed_log->error().message << "\n";
      return kUsageError;
    }
  } else {
    std::cerr << "jobmon status: job " << args.job << " is unknown: not in the daemon's database ("
              << db << "), not known to Slurm, and not a log file\n";
    return kUsageError;
  }
  if (slurm) slurm_state = slurm->state;  // Slurm's word is the freshest
  if (numeric) out["job_id"] = job_id;
  out["log"] = log_path;
  out["slurm_state"] = slurm_state;
  out["slurm_exit_code"] =
      slurm && !slurm->exit_code.empty() ? json(slurm->exit_code) : json(nullptr);
  if (record) {
    out["name"] = record->name;
    out["user"] = record->user;
    out["tracked_as"] = record->source;
    out["final_status"] = record->final_status;
    out["final_class"] = record->final_class;
  } else if (slurm) {
    out["name"] = slurm->name;
    out["user"] = slurm->user;
  }

  // The job's user: Slurm's uid (as the daemon reads), else the name the
  // daemon recorded.
  std::optional<JobUser> job_user;
  if (slurm) {
    job_user = JobUser{slurm->uid, slurm->gid};
  } else if (record) {
    job_user = LookUpJobUser(record->user);
  }

  // The projection from the log itself (as `jobmon triage` computes it).
  std::optional<triage::TriageReport> report;
  // The job's own log path (from the database or Slurm) is the job owner's
  // to choose: it is opened as that user, and only if a regular file.
  Expected<UserFile> log = typed_log          ? std::move(*typed_log)
                           : Exists(log_path) ? OpenJobFile(log_path, job_user)
                                              : Expected<UserFile>(Error{"no log"});
  if (!log && Exists(log_path)) std::cerr << "jobmon status: " << log.error().message << "\n";
  if (auto scanner = triage::LogScanner::Create({}); scanner && log) {
    auto facts = (*scanner)->ScanHeadAndTail(log->fd.get());
    if (facts) {
      triage::AnalysisContext context;
      context.stall_min_seconds = args.stall_min_seconds.value_or(config->stall.min_stall_seconds);
      context.stall_factor = config->stall.k;
      context.wall_clock_now = now;
      if (!slurm_state.empty()) context.slurm_state = slurm_state;
      if (slurm && slurm->state == slurm_state)
        context.slurm_exit_code = triage::ParseSlurmExitCode(slurm->exit_code);
      if (struct stat st{}; stat(log_path.c_str(), &st) == 0)
        context.log_mtime = static_cast<double>(st.st_mtim.tv_sec);
      report = triage::Analyze(*facts, context);
      report->log_path = log_path;
    }
  }
  const IncidentRecord* open = nullptr;
  for (const auto& i : incidents) {
    if (i.state == "open") open = &i;
  }
  std::string state;
  if (record && record->ended_at) {
    state = "ended";
  } else if (open) {
    state = "incident";
  } else if (progress) {
    state = progress->phase;
  } else if (report) {
    state = triage::ToString(report->status);
  } else {
    state = "unknown";
  }
  out["state"] = state;
  out["class"] = open ? json(open->klass) : (report ? json(report->primary) : json(nullptr));
  json p = json::object();
  if (progress) {
    p["last_step"] = progress->last_step ? json(*progress->last_step) : json(nullptr);
    p["last_step_time"] =
        progress->last_step_time ? json(*progress->last_step_time) : json(nullptr);
    p["seconds_since_last_step"] =
        progress->last_step_time ? json(now - *progress->last_step_time) : json(nullptr);
    p["median_step_seconds"] =
        progress->median_interval ? json(*progress->median_interval) : json(nullptr);
    p["p99_step_seconds"] = progress->p99_interval ? json(*progress->p99_interval) : json(nullptr);
    if (progress->last_step && !(record && record->ended_at)) {
      // The daemon's threshold at `now`: the one stall rule, the daemon's
      // policy, what its tracker learned (persisted in the record).
      triage::StallLimit limit = triage::StallThreshold(
          config->stall.rule(),
          {progress->p99_interval,
           triage::IsCheckpointStep(*progress->last_step, progress->checkpoint_period),
           progress->longest_checkpoint_pause});
      p["stall_threshold_seconds"] = limit.seconds;
      p["stall_threshold_reason"] = limit.reason;
    }
    if (progress->last_step && progress->last_step_time && progress->median_interval &&
        *progress->median_interval > 0 && !(record && record->ended_at)) {
      p["expected_step_now"] =
          *progress->last_step +
          static_cast<int64_t>((now - *progress->last_step_time) / *progress->median_interval);
    }
    p["updated_at"] = progress->updated_at;
  } else if (report && report->progress.last_step) {
    const auto& rp = report->progress;
    p["last_step"] = *rp.last_step;
    p["last_step_time"] = rp.last_step_time ? json(*rp.last_step_time) : json(nullptr);
    p["seconds_since_last_step"] =
        rp.seconds_since_last_step ? json(*rp.seconds_since_last_step) : json(nullptr);
    p["expected_step_now"] = rp.expected_step_now ? json(*rp.expected_step_now) : json(nullptr);
  }
  out["progress"] = p;
  if (open) out["stall_seconds"] = now - open->opened_at;
  out["projection"] = report ? triage::ToJson(*report)["progress"] : json(nullptr);
  out["incidents"] = json::array();
  for (const auto& i : incidents) out["incidents"].push_back(IncidentJson(i));
  out["diag_dir"] = diag_dir.empty() ? json(nullptr) : json(diag_dir);
  // The manifest is the user's file: read through the opener as the job's
  // user; the head node is Slurm's, the tunnel command is rebuilt, and only
  // checked values are shown.
  const std::string node_list = record ? record->node_list : slurm ? slurm->node_list : "";
  auto manifest = diag_dir.empty() || (!job_user && geteuid() == 0)
                      ? Expected<monitor::ManifestView>(Error{"not read"})
                      : monitor::ReadDiagManifest(diag_dir, job_user, node_list);
  if (manifest) {
    const monitor::ManifestView& view = *manifest;
    out["prometheus"] = {{"head_node", view.head_node},
                         {"url", view.url},
                         {"tunnel_command", view.tunnel_command},
                         {"state", view.state},
                         {"tsdb_dir", view.tsdb_dir.empty() ? json(nullptr) : json(view.tsdb_dir)}};
    out["archive"] = view.archive_path.empty() ? json(nullptr) : json(view.archive_path);
  }

  if (args.json) {
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::string text = fmt::format("Job {}", numeric ? args.job : log_path);
  if (out.contains("name"))
    text +=
        fmt::format(" ({}, {})", out["name"].get<std::string>(), out["user"].get<std::string>());
  text += fmt::format(": {}{}\n", state,
                      slurm_state.empty() ? "" : fmt::format(" (Slurm: {})", slurm_state));
  text += fmt::format("  from: {}\n", record ? "the monitor's database " + db + " (tracked via " +
                                                   record->source + ")"
                                             : std::string("the log alone (no daemon record)"));
  text += fmt::format("  log: {}\n", log_path);
  if (p.contains("last_step") && !p["last_step"].is_null()) {
    text += fmt::format("  last step: {}", p["last_step"].get<int64_t>());
    if (!p["last_step_time"].is_null()) {
      double t = p["last_step_time"].get<double>();
      text += fmt::format(" at {} ({} ago)", FormatIsoUtc(t), triage::FormatDuration(now - t));
    }
    text += "\n";
    if (p.contains("expected_step_now") && !p["expected_step_now"].is_null()) {
      text += fmt::format("  expected step now: {}\n", p["expected_step_now"].get<int64_t>());
    }
    if (p.contains("stall_threshold_seconds")) {
      text += fmt::format("  stall threshold: {} ({})\n",
                          triage::FormatDuration(p["stall_threshold_seconds"].get<double>()),
                          p["stall_threshold_reason"].get<std::string>());
    }
  } else {
    text += "  no step yet\n";
  }
  if (open) {
    text +=
        fmt::format("  stalled/incident for {}\n", triage::FormatDuration(now - open->opened_at));
  }
  if (record && !record->final_status.empty()) {
    text += fmt::format("  at job end: {} ({})\n", record->final_status, record->final_class);
  }
  if (incidents.empty()) {
    text += "  incidents: none\n";
  } else {
    text += "  incidents:\n";
    for (const auto& i : incidents) {
      text += fmt::format(
          "    #{} {} [{}] opened {}{}\n      {}\n", i.id, i.klass, i.state,
          FormatIsoUtc(i.opened_at),
          i.closed_at ? fmt::format(", closed {} ({})", FormatIsoUtc(*i.closed_at), i.close_reason)
                      : "",
          i.summary);
      json e = IncidentJson(i)["evidence"];
      for (size_t k = 0; k < e.size() && k < 8; ++k) {
        text += "      - " + e[k].get<std::string>() + "\n";
      }
    }
  }
  if (out.contains("prometheus")) {
    const json& prom = out["prometheus"];
    text += fmt::format("  Prometheus: {} on {} ({})\n", prom["url"].get<std::string>(),
                        prom["head_node"].get<std::string>(), prom["state"].get<std::string>());
    text += fmt::format("  tunnel: {}\n", prom["tunnel_command"].get<std::string>());
    if (!prom["tsdb_dir"].is_null()) {
      text += fmt::format("  live TSDB: {} on {}\n", prom["tsdb_dir"].get<std::string>(),
                          prom["head_node"].get<std::string>());
    }
    if (!out["archive"].is_null()) {
      text += fmt::format("  archive: {}\n", out["archive"].get<std::string>());
    }
  } else {
    text += "  Prometheus: none (the job did not run with --diag=on)\n";
  }
  if (report) {
    text += "\nProgress projection\n" + triage::RenderProjectionTable(report->progress);
  }
  std::cout << text;
  return 0;
}

// ------------------------------------------------------------------ list

struct ListArgs : CommonArgs {
  bool all = false;
};

int RunList(const ListArgs& args) {
  auto config = Config(args);
  if (!config) {
    std::cerr << "jobmon list: " << config.error().message << "\n";
    return kUsageError;
  }
  const std::string db = DbPath(args, *config);
  if (!Exists(db)) {
    std::cerr << "jobmon list: no state database at " << db
              << " (is slurm_job_monitor running? --db names another)\n";
    return 1;
  }
  auto store = monitor::StateStore::OpenReadOnly(db);
  if (!store) {
    std::cerr << "jobmon list: " << store.error().message << "\n";
    return 1;
  }
  auto jobs = (*store)->ListJobs();
  if (!jobs) {
    std::cerr << "jobmon list: " << jobs.error().message << "\n";
    return 1;
  }
  json rows = json::array();
  for (const JobRecord& j : *jobs) {
    if (j.ended_at && !args.all) continue;
    json row = {{"job_id", j.job_id},
                {"name", j.name},
                {"user", j.user},
                {"source", j.source},
                {"slurm_state", j.slurm_state},
                {"ended", j.ended_at.has_value()},
                {"final_class", j.final_class}};
    auto p = (*store)->GetProgress(j.job_id);
    row["phase"] = p && *p ? json((*p)->phase) : json(nullptr);
    row["last_step"] = p && *p && (*p)->last_step ? json(*(*p)->last_step) : json(nullptr);
    auto open = (*store)->OpenIncidentOf(j.job_id);
    row["open_incident"] = open && *open ? json((*open)->klass) : json(nullptr);
    rows.push_back(row);
  }
  if (args.json) {
    std::cout << json{{"schema", "jobmon.list/v1"}, {"jobs", rows}}.dump(2) << "\n";
    return 0;
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
  return 0;
}

// ------------------------------------------------------------------ watch

struct WatchArgs : CommonArgs {
  uint32_t job_id = 0;
};

int RunWatch(const WatchArgs& args) {
  auto config = Config(args);
  if (!config) {
    std::cerr << "jobmon watch: " << config.error().message << "\n";
    return kUsageError;
  }
  const std::string db = DbPath(args, *config);
  if (!Exists(db)) {
    std::cerr << "jobmon watch: no state database at " << db
              << " (start slurm_job_monitor first, or --db)\n";
    return 1;
  }
  auto store = monitor::StateStore::Open(db);
  if (!store) {
    std::cerr << "jobmon watch: " << store.error().message << "\n";
    return 1;
  }
  if (auto added = (*store)->AddWatch(args.job_id, Now()); !added) {
    std::cerr << "jobmon watch: " << added.error().message << "\n";
    return 1;
  }
  if (args.json) {
    std::cout << json{{"job_id", args.job_id}, {"watch", "requested"}, {"db", db}}.dump() << "\n";
  } else {
    std::cout << "job " << args.job_id
              << ": the monitor follows it from its next Slurm poll (jobmon status " << args.job_id
              << ")\n";
  }
  return 0;
}

}  // namespace

std::function<int()> AddStatusCommand(CLI::App& app) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "One job: state, class, progress projection, last and expected step, incidents with "
      "evidence, Prometheus location and tunnel, archive. From the monitor's database, or from "
      "the log when no daemon follows the job.");
  cmd->add_option("job", args->job, "Slurm job id (or a log file)")->required();
  cmd->add_option("--stall-min-seconds", args->stall_min_seconds,
                  "For the projection: stalled after max(k x p99, this) (default: "
                  "monitor.stall.min_stall, 60)");
  AddCommon(cmd, *args);
  return [cmd, args] { return cmd->parsed() ? RunStatus(*args) : -1; };
}

std::function<int()> AddListCommand(CLI::App& app) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* cmd = app.add_subcommand("list", "Every job the monitor follows, one line each.");
  cmd->add_flag("--all", args->all, "Include ended jobs");
  AddCommon(cmd, *args);
  return [cmd, args] { return cmd->parsed() ? RunList(*args) : -1; };
}

std::function<int()> AddWatchCommand(CLI::App& app) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "watch", "Ask the monitor to follow a job that neither --diag nor [monitor.select] covers.");
  cmd->add_option("job", args->job_id, "Slurm job id")->required();
  AddCommon(cmd, *args);
  return [cmd, args] { return cmd->parsed() ? RunWatch(*args) : -1; };
}

}  // namespace jobmon::cli
