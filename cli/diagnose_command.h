#pragma once
// `jobmon diagnose`: the TSDB playbooks of docs/diagnose.md
// against a job's live Prometheus, its archive or a TSDB directory.

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <string>

#include "jobmon/diagnose/diagnose_target.h"

namespace jobmon::cli {

// Diagnosed, but the TSDB does not match the log or a playbook's queries failed.
inline constexpr int kDiagnosedPartly = 3;

struct DiagnoseArgs {
  std::string target;
  std::string playbook = "auto";  // a name, several comma-separated, or auto
  bool health = false;
  std::string compare;
  bool json = false;
  std::string prometheus_url;
  std::string store_url;         // --store: the job from the central store
  std::string cluster;           // --cluster: its `cluster` label
  std::string store_token_file;  // --store-token-file: a bearer token (0600 file)
  std::string log_path;
  std::string config_path;
  // --html: also this self-contained HTML page (the chart and the report).
  std::string html_path;
  // The program that draws its chart (chart/gnuplot_chart.h); tests name a
  // missing one.
  std::string gnuplot = "gnuplot";
  bool quiet = false;
  // The monitor's end-of-job run (child_diagnoser.h): the job has ended,
  // and the output is diagnosis_report.h's JSON, whatever the outcome.
  bool for_monitor = false;
};

// Root becomes the user whose files the targets are (diagnose::TargetUser)
// before anything of theirs is read; jobs of two users cannot be compared
// as root. A no-op for anyone else.
Expected<void> BecomeTargetsUser(const DiagnoseArgs& args);

// The request for `args`, or a usage error (unknown playbook, --health with
// a named playbook, no target, --html with --for-monitor).
Expected<diagnose::TargetRequest> BuildRequest(const DiagnoseArgs& args);

// 0 diagnosed, 3 diagnosed partly, 1 the TSDB could not be opened or the
// diagnosis stopped, 2 usage or input error.
int ExitCodeFor(const diagnose::TargetOutcome& outcome);

// Runs the command with `diagnoser` (tests inject a fake), printing the
// report to `out` and progress and errors to `err`; with --html, also the
// page, written atomically after the report is printed (a chart gnuplot
// could not draw is a line in the page and a warning, the exit code kept;
// a page that cannot be written is exit 1).
// `become`: called once the config and the store's token (root's files)
// are read and before the diagnosis (the real command: BecomeTargetsUser).
int RunDiagnose(const DiagnoseArgs& args, const diagnose::TargetDiagnoser& diagnoser,
                std::ostream& out, std::ostream& err,
                const std::function<Expected<void>(const DiagnoseArgs&)>& become = {});

// The real diagnoser (diagnose_target.h), or where this build lacks it, one
// that says so.
diagnose::TargetDiagnoser DefaultDiagnoser();

std::function<int()> AddDiagnoseCommand(CLI::App& app);

}  // namespace jobmon::cli
