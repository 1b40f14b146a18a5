#include "triage_command.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_common.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/monitor/jobmon_config.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/ray_logs.h"
#include "jobmon/triage/report.h"
#include "jobmon/triage/triage.h"
#include "jobmon/triage/triage_job.h"

namespace jobmon::cli {
namespace {

using triage::AnalysisContext;
using triage::JobInput;

struct TriageArgs {
  std::string input;
  std::string all_dir;
  std::string outputs_dir = "outputs";
  bool json = false;
  std::string profile;
  std::string step_regex;
  std::string config_path;
  std::string now;
  std::string slurm_state;
  std::string slurm_exit_code;
  bool no_slurm = false;
  bool list_signatures = false;
  bool status_only = false;
  bool explain = false;
  double stall_min_seconds = triage::StallRule{}.min_stall_seconds;
  double stall_factor = triage::StallRule{}.k;
  bool stall_min_seconds_given = false;  // the flag, which wins over the config
  std::vector<std::string> kernel_logs;
  std::string ray_logs;
  std::vector<unsigned> patterns_left_out;
  std::vector<std::string> rules_left_out;
};

// <diag dir>/ray-logs (diag_dir.h), the diag dir the plugin's default
// beside the job's log; "" when there is none.
std::string RayLogsInDiagDir(const triage::JobInput& job) {
  auto id = job.job_id ? job.job_id : diagnose::JobIdOfLog(job.log_path);
  if (!id) return "";
  const std::string dir =
      DiagLayout{diagnose::DefaultDiagDirBeside(job.log_path, *id)}.ray_logs_dir();
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir : "";
}

std::optional<double> ParseTime(const std::string& text) {
  if (auto iso = triage::ParseIsoTimestamp(text)) return iso;
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// [triage] profile / step_regex and the one stall rule ([stall], as the
// monitor judges) from jobmon.toml; command-line options win.
Expected<void> LoadConfig(TriageArgs& args) {
  auto config = monitor::LoadJobmonConfig(args.config_path);
  if (!config) return config.error();
  const monitor::TriageConfig& triage = config->triage;
  if (args.profile.empty()) args.profile = triage.profile;
  if (args.step_regex.empty()) args.step_regex = triage.step_regex;
  if (!args.stall_min_seconds_given)
    args.stall_min_seconds = config->monitor.stall.min_stall_seconds;
  args.stall_factor = config->monitor.stall.k;
  return {};
}

struct KernelLogText {
  std::string path;
  std::string text;
};

Expected<std::vector<KernelLogText>> ReadKernelLogs(const std::vector<std::string>& paths) {
  std::vector<KernelLogText> out;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{"cannot read --kernel-log " + path};
    std::ostringstream text;
    text << in.rdbuf();
    out.push_back({path, text.str()});
  }
  return out;
}

// The kernel events of every --kernel-log, dated (journalctl's short format
// prints no year) by the log's own year, else the clock's.
std::vector<triage::KernelEvent> KernelEvents(const std::vector<KernelLogText>& logs,
                                              const triage::ScanFacts& facts) {
  int year = 0;
  if (facts.first_timestamp) {
    time_t t = static_cast<time_t>(*facts.first_timestamp);
    tm parts{};
    if (gmtime_r(&t, &parts)) year = parts.tm_year + 1900;
  }
  if (year == 0) year = facts.timestamp_year.value_or(0);
  if (year == 0) {
    time_t now = time(nullptr);
    tm parts{};
    gmtime_r(&now, &parts);
    year = parts.tm_year + 1900;
  }
  std::vector<triage::KernelEvent> events;
  for (const KernelLogText& log : logs) {
    for (triage::KernelEvent& e : triage::ParseKernelLog(log.text, year)) {
      e.file = log.path;
      events.push_back(std::move(e));
    }
  }
  return events;
}

int Fail(const std::string& message) { return cli::Fail("triage", "error: " + message); }

int Run(TriageArgs& args) {
  if (args.list_signatures) {
    for (const auto& p : triage::ScanPatterns()) {
      // kind, class, expression, then for classes the weight and the source.
      std::cout << p.kind << "\t" << (p.name.empty() ? "-" : p.name) << "\t" << p.expression;
      if (!p.weight.empty()) std::cout << "\t" << p.weight << "\t" << p.source;
      std::cout << "\n";
    }
    return kOk;
  }
  if (auto loaded = LoadConfig(args); !loaded) return Fail(loaded.error().message);
  if (args.input.empty() == args.all_dir.empty()) {
    return Fail("give exactly one of INPUT (log file, job dir or job id) and --all DIR");
  }
  AnalysisContext context;
  context.stall_min_seconds = args.stall_min_seconds;
  context.stall_factor = args.stall_factor;
  if (!args.profile.empty()) {
    context.profile = triage::ParseStepProfile(args.profile);
    if (!context.profile)
      return Fail("unknown --profile '" + args.profile +
                  "' (maxtext, megatron, torchtitan, hf, custom)");
  }
  if (!args.step_regex.empty() && !context.profile) context.profile = triage::StepProfile::kCustom;
  if (context.profile == triage::StepProfile::kCustom && args.step_regex.empty()) {
    return Fail("--profile custom needs --step-regex (or triage.step_regex in the config)");
  }
  if (!args.now.empty()) {
    context.now = ParseTime(args.now);
    if (!context.now) return Fail("--now wants an ISO time (2026-11-22T10:00:00Z) or unix seconds");
  }
  std::optional<triage::SlurmExitCode> slurm_exit_code;
  if (!args.slurm_exit_code.empty()) {
    slurm_exit_code = triage::ParseSlurmExitCode(args.slurm_exit_code);
    if (!slurm_exit_code)
      return Fail("--slurm-exit-code wants Slurm's ExitCode STATUS:SIGNAL (e.g. 0:0, 143:0, 0:9)");
    if (args.slurm_state.empty()) return Fail("--slurm-exit-code needs --slurm-state");
  }
  for (const std::string& name : args.rules_left_out) {
    const auto& rules = triage::CauseRules();
    if (std::none_of(rules.begin(), rules.end(),
                     [&](const triage::CauseRule& rule) { return rule.name == name; }))
      return Fail("--leave-out-rule " + name + ": no such rule (docs/triage.md lists them)");
  }
  context.rules_left_out = args.rules_left_out;
  triage::ScanOptions scan_options;
  scan_options.custom_step_regex = args.step_regex;
  scan_options.patterns_left_out = args.patterns_left_out;
  auto scanner = triage::LogScanner::Create(scan_options);  // checks the pattern ids
  if (!scanner) return Fail(scanner.error().message);
  auto kernel_logs = ReadKernelLogs(args.kernel_logs);
  if (!kernel_logs) return Fail(kernel_logs.error().message);
  if (!args.ray_logs.empty() && (!args.all_dir.empty() || args.status_only))
    return Fail("--ray-logs reads one job's Ray session: not with --all or --status-only");

  std::vector<JobInput> jobs;
  if (!args.all_dir.empty()) {
    auto listed = triage::ListOutputJobs(args.all_dir);
    if (!listed) return Fail(listed.error().message);
    jobs = std::move(listed.value());
    if (jobs.empty()) return Fail("no job dirs (with a `log` symlink) in " + args.all_dir);
  } else {
    auto resolved = triage::ResolveJobInput(args.input, args.outputs_dir);
    if (!resolved) return Fail(resolved.error().message);
    jobs.push_back(*resolved);
  }

  // Ray's worker logs: named, or those the job left in its diag dir.
  std::string ray_lines;
  std::string ray_dir = args.ray_logs;
  if (ray_dir.empty() && jobs.size() == 1 && args.all_dir.empty() && !args.status_only)
    ray_dir = RayLogsInDiagDir(jobs.front());
  if (!ray_dir.empty()) {
    auto read = triage::ReadRayWorkerLogs(ray_dir);
    if (!read) return Fail(read.error().message);
    ray_lines = std::move(read).value();
    if (args.ray_logs.empty() && !ray_lines.empty())
      std::cerr << "jobmon triage: with Ray's worker logs in " << ray_dir << "\n";
  }

  std::vector<triage::TriageReport> reports;
  const bool progress = jobs.size() > 1 && isatty(STDERR_FILENO);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInput& job = jobs[i];
    if (progress)
      std::cerr << fmt::format("\r[{}/{}] {}\x1b[K", i + 1, jobs.size(), job.log_path)
                << std::flush;
    auto facts = args.status_only     ? (*scanner)->ScanHeadAndTail(job.log_path)
                 : !ray_lines.empty() ? (*scanner)->ScanFileThenText(job.log_path, ray_lines)
                                      : (*scanner)->ScanFile(job.log_path);
    if (!facts) {
      if (jobs.size() == 1) return Fail(facts.error().message);
      std::cerr << "jobmon triage: skipping " << job.log_path << ": " << facts.error().message
                << "\n";
      continue;
    }
    triage::JobContext job_context;
    job_context.log_path = job.log_path;
    job_context.job_id = job.job_id;
    job_context.job_dir = job.job_dir;
    job_context.analysis = context;
    job_context.analysis.kernel_events = KernelEvents(*kernel_logs, *facts);
    if (!args.slurm_state.empty()) {
      job_context.slurm_state = args.slurm_state;
      job_context.slurm_exit_code = slurm_exit_code;
    } else {
      job_context.ask_slurm = !args.no_slurm;
    }
    // The file's mtime says whether the log still advances (a live job read
    // without Slurm); never whether training progresses.
    if (struct stat st{}; stat(job.log_path.c_str(), &st) == 0) {
      job_context.analysis.log_mtime =
          static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
    }
    triage::TriageReport report = triage::TriageJob(*facts, job_context);
    reports.push_back(std::move(report));
  }
  if (progress) std::cerr << "\r\x1b[K";
  if (reports.empty()) return Fail("no job could be read");

  if (args.status_only) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& report : reports) {
      const auto& p = report.progress;
      if (args.json) {
        all.push_back(
            {{"schema", "jobmon.triage-status/v1"},
             {"log", report.log_path},
             {"status", triage::ToString(report.status)},
             {"status_basis", report.status_basis},
             {"slurm_state",
              report.slurm_state ? nlohmann::json(*report.slurm_state) : nlohmann::json()},
             {"slurm_exit_code",
              report.slurm_exit_code ? nlohmann::json(*report.slurm_exit_code) : nlohmann::json()},
             {"last_step", p.last_step ? nlohmann::json(*p.last_step) : nlohmann::json()},
             {"total_steps", p.total_steps ? nlohmann::json(*p.total_steps) : nlohmann::json()},
             {"exit_code", triage::ExitCodeFor(report.status)}});
      } else {
        std::cout << fmt::format(
            "{:<14} {:<16} {} ({})\n", triage::ToString(report.status),
            p.last_step ? fmt::format("step {}/{}", *p.last_step,
                                      p.total_steps ? std::to_string(*p.total_steps) : "?")
                        : "no steps",
            report.log_path, report.status_basis);
      }
    }
    if (args.json) std::cout << JsonText(all.size() == 1 ? all[0] : all);
    int worst = 0;
    for (const auto& report : reports) worst = std::max(worst, triage::Severity(report.status));
    for (const auto& report : reports) {
      if (triage::Severity(report.status) == worst) return triage::ExitCodeFor(report.status);
    }
  }
  if (args.all_dir.empty()) {
    const auto& report = reports.front();
    if (args.json) {
      std::cout << JsonText(triage::ToJson(report));
    } else {
      std::cout << triage::RenderMarkdown(report);
      if (args.explain) std::cout << "\n" << triage::RenderChain(report.chain);
    }
    return triage::ExitCodeFor(report.status);
  }
  std::stable_sort(reports.begin(), reports.end(), [](const auto& a, const auto& b) {
    return triage::Severity(a.status) > triage::Severity(b.status);
  });
  if (args.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& report : reports) all.push_back(triage::ToJson(report));
    std::cout << JsonText(all);
  } else {
    std::cout << fmt::format("{:<14} {:<20} {:<16} {}\n", "STATUS", "PRIMARY", "PROGRESS", "LOG");
    for (const auto& report : reports) std::cout << triage::SummaryLine(report) << "\n";
  }
  return triage::ExitCodeFor(reports.front().status);
}

}  // namespace

std::function<int()> AddTriageCommand(CLI::App& app) {
  auto args = std::make_shared<TriageArgs>();
  CLI::App* cmd = app.add_subcommand(
      "triage",
      "Triage a job log: status, failure class with evidence, progress projection, heartbeat "
      "checklist, next steps (no daemon needed).");
  cmd->add_option("input", args->input,
                  "Log file, job dir (with a `log` symlink), or Slurm job id");
  cmd->add_option("--all", args->all_dir,
                  "Triage every job dir in this outputs dir, one line each, worst first");
  cmd->add_option("--outputs", args->outputs_dir, "Where to look up a job id")
      ->capture_default_str();
  AddJsonFlag(cmd, args->json, "JSON output (schema jobmon.triage/v1, see docs/triage-json.md)");
  cmd->add_option(
      "--profile", args->profile,
      "Step-line profile: maxtext, megatron, torchtitan, hf, custom (default: detected)");
  cmd->add_option(
      "--step-regex", args->step_regex,
      "Custom step regex (RE2) with (?P<step>\\d+) and optionally (?P<seconds>[0-9.]+)");
  cmd->add_option("-c,--config", args->config_path,
                  std::string(kConfigOptionHelp) +
                      "; its [triage] profile, step_regex and [stall] rule are defaults");
  cmd->add_option("--now", args->now,
                  "Evaluate progress at this time (ISO or unix seconds) instead of now");
  cmd->add_option("--slurm-state", args->slurm_state,
                  "Use this Slurm job state (RUNNING, COMPLETED, FAILED, TIMEOUT, ...) instead of "
                  "asking squeue");
  cmd->add_option("--slurm-exit-code", args->slurm_exit_code,
                  "With --slurm-state: Slurm's ExitCode STATUS:SIGNAL (scontrol show job, sacct)");
  cmd->add_flag("--no-slurm", args->no_slurm, "Do not ask Slurm for the job state");
  cmd->add_flag(
      "--status-only", args->status_only,
      "Status alone, from the head and tail of the log (no full scan unless the tail cannot "
      "date the last step)");
  cmd->add_flag("--explain", args->explain,
                "Also print the causal chain: every failure event (rank, line, time), which event "
                "explains it and by which rule (JSON output always has it, as \"chain\")");
  cmd->add_flag("--list-signatures", args->list_signatures,
                "Print every pattern the scan uses (kind, class or profile, expression; for "
                "classes also weight and source) and exit");
  cmd->add_option(
      "--kernel-log", args->kernel_logs,
      "Kernel messages from the job's nodes, as `dmesg` (with or without -T) or `journalctl -k` "
      "print them (repeatable): OOM-killer reports, NVIDIA Xid and amdgpu faults become "
      "evidence. An OOM kill counts for the job when its memory cgroup names job_<id>, the log "
      "names its pid, its time lies in the log's span (training process), or, with none of "
      "those to compare, the log shows a SIGKILL of a training process (weak); it is then the "
      "root (oom-host) and the SIGKILL its consequence. Xid/amdgpu lines become findings");
  cmd->add_option("--ray-logs", args->ray_logs,
                  "A Ray session's logs directory (…/session_latest/logs): every worker's "
                  "worker-*.out|.err is read after the log, each line as Ray forwards it to the "
                  "driver, \"(<actor> pid=<pid>) \", so its steps and failures are that actor's "
                  "(docs/ray.md)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--leave-out-pattern", args->patterns_left_out,
                  "Scan without this pattern (its line number, from 0, in --list-signatures; "
                  "repeatable): for the leave-one-family-out evaluation")
      ->allow_extra_args(false)  // one value per flag: the log after it is no pattern id
      ->group("Evaluation");
  cmd->add_option("--leave-out-rule", args->rules_left_out,
                  "Read the causal chain without this rule (repeatable): for the "
                  "leave-one-family-out evaluation")
      ->allow_extra_args(false)
      ->group("Evaluation");
  CLI::Option* stall_flag =
      cmd->add_option("--stall-min-seconds", args->stall_min_seconds,
                      "No step for max(k x p99 step time, this) means stalled (default: "
                      "jobmon.toml's [stall] min_stall, the monitor's own)")
          ->capture_default_str();
  cmd->footer(
      "Exit codes: 0 completed, 3 running, 4 hanging, 5 failed, 6 cancelled, 7 unknown-death, "
      "8 unknown (log stopped, no Slurm state), 2 usage or input error; with --all, the code of "
      "the worst job. Status rules: docs/concepts.md (Job status).");
  return [cmd, args, stall_flag] {
    if (!cmd->parsed()) return kNotThisOne;
    args->stall_min_seconds_given = stall_flag->count() > 0;
    return Run(*args);
  };
}

}  // namespace jobmon::cli
