#include "diagnose_command.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "jobmon/chart/gnuplot_chart.h"
#include "jobmon/chart/html_report.h"
#include "jobmon/common/atomic_file.h"
#include "jobmon/common/config_path.h"
#include "jobmon/common/http_url.h"
#include "jobmon/common/run_command.h"
#include "jobmon/diagnose/diagnosis_report.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/diagnose/report.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/monitor/jobmon_config.h"

namespace jobmon::cli {
namespace {

using diagnose::TargetOutcome;

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string PlaybookNames() {
  std::string names;
  for (const auto& spec : diagnose::Playbooks())
    names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return names;
}

// Before the diagnosis (it may take minutes): the page's directory must take
// a file from whoever the command is now; as root for a user's job that is
// the job's user (BecomeTargetsUser), and it stays so.
Expected<void> CheckHtmlPath(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path file(path);
  std::error_code ignored;
  if (!file.has_filename() || fs::is_directory(file, ignored))
    return Error{"--html wants a file, and '" + path + "' is a directory"};
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return Error{fmt::format("--html: cannot write in {} as uid {}: {}", dir.string(), geteuid(),
                             std::strerror(errno))};
  return {};
}

// The page, written atomically (temp file, fsync, rename) with the rights
// the diagnosis ran with: as root for a user's job, the job's user's, so the
// file is theirs, like the diagnosis' own temp files (docs/diagnose.md,
// "HTML report"). Its mode is the one a shell's `>` gives the report on
// stdout: 0666 less the umask. The chart is optional: without gnuplot, or
// when it fails, the page says why and the command goes on.
Expected<void> WriteHtml(const DiagnoseArgs& args, const diagnose::Diagnosis& diagnosis,
                         std::ostream& err) {
  Expected<std::string> png = Error{"the diagnosis made no picture"};
  if (diagnosis.picture) {
    chart::ChartOptions options;
    options.gnuplot = args.gnuplot;
    png = chart::RenderPng(*diagnosis.picture, options);
  }
  if (!png) {
    err << "jobmon diagnose: warning: no chart in " << args.html_path << ": " << png.error().message
        << "\n";
  }
  const std::string html = chart::RenderHtml(diagnose::HtmlReport(diagnosis, png));
  const mode_t mask = umask(0);
  umask(mask);
  return WriteFileAtomically(args.html_path, html, 0666 & ~mask);
}

}  // namespace

Expected<diagnose::TargetRequest> BuildRequest(const DiagnoseArgs& args) {
  if (args.target.empty())
    return Error{"give the job: a job id, its log, its diag dir, tsdb.tar.zst or a TSDB dir"};
  diagnose::TargetRequest request;
  request.argument = args.target;
  std::vector<std::string> names = SplitCommas(args.playbook);
  if (names.empty()) return Error{"--playbook wants a name or auto (" + PlaybookNames() + ")"};
  for (const auto& name : names) {
    if (name != "auto" && !diagnose::FindPlaybook(name))
      return Error{fmt::format("unknown playbook '{}' (auto, {})", name, PlaybookNames())};
  }
  if (names.size() > 1 && std::find(names.begin(), names.end(), "auto") != names.end())
    return Error{"--playbook auto picks the playbooks itself: give it alone"};
  if (args.health) {
    if (names != std::vector<std::string>{"auto"})
      return Error{"--health is the sweep of gpu, network and training: not with --playbook"};
    names = {"health"};
  }
  request.playbooks = std::move(names);
  if (!args.prometheus_url.empty()) request.prometheus_url = args.prometheus_url;
  if (!args.compare.empty() && !args.prometheus_url.empty())
    return Error{"--compare opens both jobs itself: not with --prometheus"};
  request.compare = args.compare;
  request.log_path = args.log_path;
  if (!args.store_url.empty() && !args.prometheus_url.empty())
    return Error{"--store and --prometheus name two sources: give one"};
  if (!args.html_path.empty() && args.for_monitor)
    return Error{"--html is a person's page, not for the monitor's run (--for-monitor)"};
  request.picture = !args.html_path.empty();
  return request;
}

// The central store from the flags, the environment and [diagnose]:
// --store queries it for the job; [diagnose] store_url alone is the
// fallback for a job whose archive is gone. The token comes from
// --store-token-file, else $JOBMON_STORE_TOKEN, else store_token_file.
Expected<void> AddStore(const DiagnoseArgs& args, const monitor::DiagnoseConfig& config,
                        diagnose::TargetRequest& request) {
  const std::string url = args.store_url.empty() ? config.store_url : args.store_url;
  if (url.empty()) {
    if (!args.cluster.empty() || !args.store_token_file.empty())
      return Error{
          "--cluster and --store-token-file go with a store (--store or [diagnose] "
          "store_url)"};
    return {};
  }
  if (!IsHttpUrl(url)) return Error{"--store wants an http:// or https:// URL, not '" + url + "'"};
  diagnose::CentralStore store;
  store.url = url;
  store.cluster = args.cluster.empty() ? config.cluster : args.cluster;
  store.lookback_seconds = config.store_lookback_seconds;
  const char* env = std::getenv("JOBMON_STORE_TOKEN");
  const std::string file = args.store_token_file.empty() && !(env && *env) ? config.store_token_file
                                                                           : args.store_token_file;
  if (!file.empty()) {
    auto token = diagnose::ReadBearerTokenFile(file);
    if (!token) return token.error();
    store.bearer_token = *token;
  } else if (env && *env) {
    store.bearer_token = env;
  }
  request.store = std::move(store);
  request.store_only = !args.store_url.empty();
  return {};
}

int ExitCodeFor(const TargetOutcome& outcome) {
  switch (outcome.status) {
    case TargetOutcome::Status::kDiagnosed: {
      bool partial = !outcome.diagnosis.tsdb_matches_log;
      for (const auto& p : outcome.diagnosis.playbooks) partial = partial || !p.errors.empty();
      return partial ? kDiagnosedPartly : kOk;
    }
    case TargetOutcome::Status::kInputError:
      return kUsageError;
    case TargetOutcome::Status::kAccessError:
    case TargetOutcome::Status::kCancelled:
      return kFailed;
  }
  return kFailed;
}

Expected<void> BecomeTargetsUser(const DiagnoseArgs& args) {
  if (geteuid() != 0) return {};
  auto user = diagnose::TargetUser(args.target);
  if (!user) {
    // A job Slurm no longer lists (its user unknown): read as nobody, which
    // still reaches a central store (--store) and world-readable files,
    // never a file of anyone's that root alone could read.
    auto nobody = LookUpJobUser("nobody");
    if (!nobody) return user.error();
    user = *nobody;
  }
  if (!args.compare.empty()) {
    auto other = diagnose::TargetUser(args.compare);
    if (!other) return other.error();
    if (other->uid != user->uid)
      return Error{fmt::format(
          "as root, the two jobs are read as their users, and uid {} and uid {} differ: run "
          "--compare as a user who may read both",
          user->uid, other->uid)};
  }
  if (user->uid == 0) return {};  // root's own files
  auto became = BecomeUser(*user);
  if (!became)
    return Error{"becoming uid " + std::to_string(user->uid) + ": " + became.error().message};
  return {};
}

int RunDiagnose(const DiagnoseArgs& args, const diagnose::TargetDiagnoser& diagnoser,
                std::ostream& out, std::ostream& err,
                const std::function<Expected<void>(const DiagnoseArgs&)>& become) {
  auto fail = [&err](const std::string& message, int code) {
    err << "jobmon diagnose: error: " << message << "\n";
    return code;
  };
  auto built = BuildRequest(args);
  if (!built) return fail(built.error().message, kUsageError);
  diagnose::TargetRequest request = *built;
  auto config = monitor::LoadJobmonConfig(args.config_path);
  if (!config) return fail(config.error().message, kUsageError);
  if (auto store = AddStore(args, config->diagnose, request); !store)
    return fail(store.error().message, kUsageError);
  request.step_regex = config->triage.step_regex;
  request.stall_min_seconds = config->monitor.stall.min_stall_seconds;
  request.stall_factor = config->monitor.stall.k;
  request.job_ended = args.for_monitor;
  if (become) {
    if (auto became = become(args); !became) {
      if (args.for_monitor) {
        out << diagnose::ReportJson(
            {TargetOutcome::Status::kAccessError, became.error().message, {}, {}});
        return kFailed;
      }
      return fail(became.error().message, kFailed);
    }
  }
  if (!args.html_path.empty()) {
    if (auto writable = CheckHtmlPath(args.html_path); !writable)
      return fail(writable.error().message, kUsageError);
  }
  // A session of ours a SIGKILL interrupted leaves its Prometheus running.
  for (const std::string& line : diagnose::StopOrphanedSessions()) {
    if (!args.quiet) err << "jobmon diagnose: an orphaned session: " << line << "\n";
  }
  if (!args.quiet) {
    request.progress = [&err](std::string_view line) {
      err << "jobmon diagnose: " << line << "\n" << std::flush;
    };
  }
  TargetOutcome outcome = diagnoser(request);
  const int code = ExitCodeFor(outcome);
  if (args.for_monitor) {
    out << diagnose::ReportJson(diagnose::ReportOf(outcome));
    return code;
  }
  if (outcome.status != TargetOutcome::Status::kDiagnosed) return fail(outcome.error, code);
  if (args.json) {
    out << JsonText(diagnose::ToJson(outcome.diagnosis));
  } else {
    out << diagnose::RenderMarkdown(outcome.diagnosis);
  }
  if (!outcome.diagnosis.tsdb_matches_log)
    err << "jobmon diagnose: warning: the TSDB does not match the log (wrong TSDB?): "
        << outcome.diagnosis.tsdb_check << "\n";
  if (!args.html_path.empty()) {
    if (auto written = WriteHtml(args, outcome.diagnosis, err); !written)
      return fail("--html: " + written.error().message, kFailed);
    if (!args.quiet) err << "jobmon diagnose: wrote " << args.html_path << "\n";
  }
  return code;
}

diagnose::TargetDiagnoser DefaultDiagnoser() { return diagnose::DiagnoseTarget; }

std::function<int()> AddDiagnoseCommand(CLI::App& app) {
  auto args = std::make_shared<DiagnoseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "Diagnose a job from its metrics (TSDB): the playbooks of docs/diagnose.md on its live "
      "Prometheus, its archive (served by a read-only Prometheus on a free loopback port, "
      "removed afterwards) or a TSDB directory.");
  cmd->add_option("target", args->target,
                  "Job id, job log, diag dir, tsdb.tar.zst archive, or TSDB directory");
  cmd->add_option("--playbook", args->playbook,
                  "auto (from the log's triage class; none: the health sweep), or one or more "
                  "comma-separated of: " +
                      PlaybookNames())
      ->capture_default_str();
  cmd->add_flag("--health", args->health,
                "The health sweep (gpu, network, training) for a live or finished job");
  cmd->add_option("--compare", args->compare,
                  "Another job (same forms as target): the two side by side");
  AddJsonFlag(cmd, args->json,
              "JSON output (schema jobmon.diagnose/v1, see docs/diagnose-json.md)");
  cmd->add_option("--prometheus", args->prometheus_url,
                  "Query this Prometheus (e.g. an ssh tunnel to a live job's), start none");
  cmd->add_option("--store", args->store_url,
                  "Query the cluster's central store (VictoriaMetrics/Prometheus fed by the "
                  "plugin's remote_write) at this URL for the job, every query confined to its "
                  "slurm_job_id (and --cluster); [diagnose] store_url in jobmon.toml makes it "
                  "the fallback for jobs whose archive is gone");
  cmd->add_option("--cluster", args->cluster,
                  "The job's cluster label in a store that holds several clusters");
  cmd->add_option("--store-token-file", args->store_token_file,
                  "A bearer token for the store, in a file only its owner may read (0600); or "
                  "set $JOBMON_STORE_TOKEN");
  cmd->add_option("--log", args->log_path, "The job's log, when it is not found beside the job");
  cmd->add_option("--html", args->html_path,
                  "Also write FILE: a self-contained HTML page (no script, nothing fetched) with "
                  "the job's chart (steps against the expected line, the stall shaded, each "
                  "host's GPU utilisation and power, drawn by gnuplot) and the report; as root, "
                  "written as the job's user")
      ->type_name("FILE");
  cmd->add_option(
      "-c,--config", args->config_path,
      std::string(kConfigOptionHelp) + "; its [triage] step_regex and [stall] rule read the log");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress lines on stderr");
  // Hidden (no group): the monitor's own call, not a user's.
  cmd->add_flag("--for-monitor", args->for_monitor,
                "The monitor's end-of-job run: the job has ended; the report as "
                "jobmon.diagnose-report/v1 JSON")
      ->group("");
  cmd->footer(
      "Run as root, it reads the job's files as the job's user (Slurm's, or the owner of the "
      "path given) and nothing else. Exit codes: 0 diagnosed, 3 diagnosed partly (the TSDB does "
      "not match the log, or a "
      "playbook's queries failed), 1 the TSDB could not be opened or served (or the --html file "
      "not written; a chart gnuplot could not draw changes no exit code), 2 usage or input "
      "error (nothing found for the target), 130/143 interrupted (the read-only Prometheus is "
      "stopped first). Report format: docs/diagnose-json.md.");
  return [cmd, args] {
    if (!cmd->parsed()) return kNotThisOne;
    return RunDiagnose(*args, DefaultDiagnoser(), std::cout, std::cerr, BecomeTargetsUser);
  };
}

}  // namespace jobmon::cli
