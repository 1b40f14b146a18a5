#include "jobmon/triage/triage.h"

#include <fmt/format.h>

#include "analysis/analysis.h"
#include "jobmon/triage/runtime.h"

namespace jobmon::triage {

std::string FormatDuration(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return fmt::format("{:.0f}s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f}m", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.1f}h", seconds / 3600);
  return fmt::format("{:.1f}d", seconds / 86400);
}

std::string DecodeExitCode(int code) {
  switch (code) {
    case 0:
      return "success";
    case 1:
      return "generic error (read the task output)";
    case 130:
      return "SIGINT (interrupted)";
    case 134:
      return "SIGABRT (assertion failure, core dump)";
    case 137:
      return "SIGKILL (OOM or external kill)";
    case 139:
      return "SIGSEGV (crash, core dump likely in the job dir)";
    case 143:
      return "SIGTERM (scancel or scheduler)";
    default:
      break;
  }
  if (code > 128 && code < 128 + 65) return fmt::format("killed by signal {}", code - 128);
  return "non-zero exit (read the task output)";
}

// The phases in order: each decides from what the earlier ones decided.
TriageReport Analyze(const ScanFacts& facts, const AnalysisContext& context) {
  TriageReport r = analysis::ReadFacts(facts, context);
  analysis::Analysis a;
  r.runtimes = Names(facts.runtimes);
  analysis::MatchKernel(facts, context, r, a);
  analysis::DecideStatus(facts, context, r, a);
  analysis::ReadTheLogsEnd(facts, context, r, a);
  analysis::DeriveClasses(facts, r, a);
  analysis::ChoosePrimary(facts, context, r, a);
  analysis::SetStage(r, a);
  analysis::TellWhatHappened(facts, r, a);
  analysis::AddCascade(r, a);
  analysis::CollectEvidence(facts, r, a);
  analysis::DecodeNodeExits(facts, r);
  analysis::AddHeartbeatChecklist(facts, r, a);
  analysis::CompareRanks(facts, r);
  analysis::AddFindings(facts, r, a);
  analysis::ReadDashboards(facts, r);
  analysis::SuggestNextSteps(facts, r, a);
  return r;
}

}  // namespace jobmon::triage
