#include "monitor_commands.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_common.h"
#include "daemon_access.h"
#include "jobmon/chart/html_report.h"
#include "jobmon/common/atomic_file.h"
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
#include "jobmon/triage/triage_job.h"
#include "list_view.h"
#include "status_gather.h"
#include "status_html.h"
#include "status_view.h"

namespace jobmon::cli {
namespace {

using monitor::JobRecord;
using nlohmann::json;

// ------------------------------------------------------------------ status

int RunStatus(const StatusArgs& args) {
  StatusInputs in;
  if (int code = GatherStatus(args, in); code != kOk) return code;
  const StatusView view = BuildStatusView(in);
  std::cout << (args.json ? JsonText(StatusJson(view)) : StatusText(view));
  if (!args.html.empty()) {
    // Written as whoever runs `jobmon status`, 0600: it quotes the job's log.
    const std::string html = chart::RenderHtml(StatusHtmlPage(view, in.chart));
    if (auto written = WriteFileAtomically(args.html, html, 0600); !written) {
      return Fail("status", args.html + ": " + written.error().message, kFailed);
    }
    std::cerr << "jobmon status: wrote " << args.html
              << (in.chart ? " (with the chart of incident " + std::to_string(in.chart->first) + ")"
                           : " (no chart: the monitor has none for this job)")
              << "\n";
  }
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
  for (const json& r : rows) std::cout << ListLine(r);
  if (rows.empty())
    std::cout << "(no jobs" << (args.all ? "" : " being followed; --all shows ended ones") << ")\n";
  return kOk;
}

// ------------------------------------------------------------------ watch

struct WatchArgs : CommonArgs {
  uint32_t job_id = 0;
};

// How a request reached the daemon: "api", or "database" (written into
// its state database, root's way when no daemon answers); else the reason,
// already said.
struct Delivered {
  std::string source, db;
  int exit_code = kOk;
};

// `op` through the daemon's API; where it does not answer, `write` into its
// database. A refusal in `fatal` (any, when `fatal` is empty) ends it.
Delivered AskOrWrite(const char* command, const WatchArgs& args, const std::string& op,
                     const std::vector<std::string>& fatal,
                     const std::function<Expected<void>(monitor::StateStore&)>& write) {
  auto config = Config(args);
  if (!config) return {"", "", Fail(command, config.error().message)};
  Delivered out{"database", DbPath(args, *config)};
  if (auto answer = AskDaemon(args, *config, {.op = op, .job_id = args.job_id})) {
    const bool refused_for_good =
        *answer && (fatal.empty() || std::any_of(fatal.begin(), fatal.end(), [&](const auto& code) {
                      return Refused(**answer, code);
                    }));
    if (*answer && (**answer).value("ok", false)) {
      out.source = "api";
    } else if (refused_for_good) {
      return {"", "", Fail(command, (**answer).value("error", "refused"), kFailed)};
    } else {
      std::cerr << "jobmon " << command << ": the daemon's API: "
                << (*answer ? (**answer).value("error", "refused") : answer->error().message)
                << "; writing into its database\n";
    }
  }
  if (out.source == "database") {
    if (!PathExists(out.db)) {
      return {"", "",
              Fail(command,
                   "no API socket at " + SocketPath(args, *config) + " and no state database at " +
                       out.db + " (start slurm_job_monitor first, or --socket / --db)",
                   kFailed)};
    }
    auto store = monitor::StateStore::Open(out.db);
    if (!store) return {"", "", Fail(command, store.error().message, kFailed)};
    if (auto written = write(**store); !written) {
      return {"", "", Fail(command, written.error().message, kFailed)};
    }
  }
  return out;
}

int RunWatch(const WatchArgs& args) {
  const Delivered d = AskOrWrite(
      "watch", args, "watch", {"forbidden", "too_many_watches"},
      [&](monitor::StateStore& store) { return store.AddWatch(args.job_id, NowSeconds()); });
  if (d.exit_code != kOk) return d.exit_code;
  if (args.json) {
    json out = {{"job_id", args.job_id}, {"watch", "requested"}, {"source", d.source}};
    if (d.source == "database") out["db"] = d.db;
    std::cout << JsonText(out, -1);
  } else {
    std::cout << "job " << args.job_id
              << ": the monitor follows it from its next Slurm poll (jobmon status " << args.job_id
              << ")\n";
  }
  return kOk;
}

// ------------------------------------------------------------------ hold

int RunHold(const WatchArgs& args) {
  const Delivered d = AskOrWrite("hold", args, "hold", {}, [&](monitor::StateStore& store) {
    return store.HoldRecovery(args.job_id, NowSeconds(), getuid());
  });
  if (d.exit_code != kOk) return d.exit_code;
  if (args.json) {
    std::cout << JsonText({{"job_id", args.job_id}, {"hold", "requested"}, {"source", d.source}},
                          -1);
  } else {
    std::cout << "job " << args.job_id
              << ": held: the monitor takes no recovery step for it (alerts still go out)\n";
  }
  return kOk;
}

}  // namespace

std::function<int()> AddHoldCommand(CLI::App& app) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "hold",
      "Hold the recovery of a job (its --diag-on-hang signal, requeue or cancel): the monitor "
      "takes no step for it any more; alerts still go out. The job's owner, root and "
      "monitor.admin_group may hold it (docs/recovery.md).");
  cmd->add_option("job", args->job_id, "Slurm job id")->required();
  AddCommon(cmd, *args);
  return Runner(cmd, args, RunHold);
}

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
                  "[stall] min_stall, 60)");
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML report to FILE (mode 0600): the status and "
                  "the chart the monitor drew when the job's newest incident fired")
      ->type_name("FILE");
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
