#pragma once
// Private to triage/src/analysis/: the phases of Analyze (triage.cc) and
// the helpers more than one phase uses. Each phase reads the scan's facts
// and what the earlier phases decided (Analysis) and writes its part of
// the report.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jobmon/triage/triage.h"

namespace jobmon::triage::analysis {

// The log's own clock: the steps stopped, yet timestamped lines
// (a status or heartbeat thread, a launcher's keep-alive) went on printing.
// The last step came before the first timestamped line after it; the stall
// lasted at least from there to the log's last timestamp. Two timestamped
// lines after the step at least: one could be the end's own banner.
struct ClockStall {
  double seconds = 0;
  double step_before = 0;  // the last step came before this time
  uint64_t step_before_line = 0;
  std::optional<LineRef> last_stamped;  // the log's last timestamped line, when kept
};

// What the phases of Analyze decide and hand on to the later ones.
struct Analysis {
  StepProfile profile{};
  bool summary = false;      // a JOB SUMMARY (or its exit code) was read
  bool reached_end = false;  // the last planned step was reached
  bool open_end = false;     // the status leaves open how the log ended
  StatusInputs in;
  StatusDecision decision;
  std::vector<const KernelFinding*> oom_kills;  // into the report's kernel findings
  std::optional<ClockStall> clock_stall;
  std::map<std::string, ClassFinding> found;  // classes seen and derived, by id
  bool hang = false;
  uint64_t root_line = 0;  // the log's root failure's line (LogRootFailure), 0: none
  std::string primary;
  std::optional<uint64_t> primary_line;
  std::string kernel_root_over;     // the log's own primary a kernel OOM kill explains
  std::optional<LineRef> watchdog;  // the job's own watchdog fired after the last step
};

// progress_projection.cc
StepProfile ChooseProfile(const ScanFacts& facts, const AnalysisContext& context);
std::optional<double> LineTime(const std::string& text, std::optional<int> year);
Progress Project(const ScanFacts& facts, StepProfile profile, bool ended,
                 const AnalysisContext& context);
HeartbeatChecklist CheckHeartbeat(const ScanFacts& facts, const Progress& progress,
                                  StepProfile profile);

// class_lines.cc
bool IsTrainingClass(const FailureClass& c);
bool IsGenericTrainingClass(const FailureClass& c);
// A class's first and last line of one weight, with the step lines each
// profile had counted at each (log_scan.h ClassHits).
struct WeightLines {
  const std::optional<uint64_t>& first;
  const std::optional<uint64_t>& last;
  const ClassHits::StepCounts& at_first;
  const ClassHits::StepCounts& at_last;
};
WeightLines LinesOf(const ClassHits& h, Weight weight);
// A class's line of one weight that training did not go on after: the
// first, else the last; nullopt when both were survived. Also the step
// lines printed after the first.
struct FatalLine {
  std::optional<uint64_t> line;
  uint64_t step_lines_after = 0;
  uint64_t step_lines_after_first = 0;
};
FatalLine FatalLineOf(const ScanFacts& facts, const ClassHits& hits, Weight weight,
                      StepProfile profile);
std::optional<uint64_t> StepLinesAfter(const ScanFacts& facts, const std::string& id, uint64_t line,
                                       StepProfile profile);
std::pair<std::string, uint64_t> LogRootFailure(const ScanFacts& facts, StepProfile profile);
std::optional<double> FailureTime(const ScanFacts& facts, const std::string& primary,
                                  std::optional<uint64_t> primary_line);
const LineRef* KeptLine(const ScanFacts& facts, const std::string& id, uint64_t line);

// The phases, in Analyze's order.
// status.cc
TriageReport ReadFacts(const ScanFacts& facts, const AnalysisContext& context);
void MatchKernel(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                 Analysis& a);
void DecideStatus(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                  Analysis& a);
void ReadTheLogsEnd(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                    Analysis& a);
void DeriveClasses(const ScanFacts& facts, TriageReport& r, Analysis& a);
// primary.cc
void ChoosePrimary(const ScanFacts& facts, const AnalysisContext& context, TriageReport& r,
                   Analysis& a);
// narrative.cc
void SetStage(TriageReport& r, const Analysis& a);
void TellWhatHappened(const ScanFacts& facts, TriageReport& r, Analysis& a);
void AddCascade(TriageReport& r, const Analysis& a);
// findings.cc
void CollectEvidence(const ScanFacts& facts, TriageReport& r, const Analysis& a);
void DecodeNodeExits(const ScanFacts& facts, TriageReport& r);
void AddHeartbeatChecklist(const ScanFacts& facts, TriageReport& r, const Analysis& a);
void CompareRanks(const ScanFacts& facts, TriageReport& r);
void AddFindings(const ScanFacts& facts, TriageReport& r, const Analysis& a);
void ReadDashboards(const ScanFacts& facts, TriageReport& r);
// advice.cc
void SuggestNextSteps(const ScanFacts& facts, TriageReport& r, const Analysis& a);

}  // namespace jobmon::triage::analysis
