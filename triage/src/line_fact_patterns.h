#pragma once
// The scanner's prefilter for line facts: one expression per wording, in the
// order the scanner's database lists them. Defined next to the parsers that
// read the same wording (line_facts.cc). Private to the scanner.

#include <string>
#include <vector>

#include "line_walk_patterns.h"

namespace jobmon::triage {

enum class Fact {
  kSummary,
  kStatusSuccess,
  kStatusFailed,
  kNodeExit,
  kPassthrough,
  kCheckpointPeriod,
  kNnodes,
  kNodeList,
  kJobId,
  kAccusedTask,
  kTaskHostFake,
  kTaskHostJax,
  kSelfDeath,
  kIsoTimestamp,
  kYearlessTimestamp,
  kTunnel,
  kPrometheusPort,
  kRestore,
  kFreshStart,
  kTaskKilled,
  kCompletion,
  kSlurmEnd,
  kExceptionLine,
  kTaskExit,
  kHeartbeatTimeout,
  kLauncherRootCause,
  kLauncherField,
  kPlannedTotal,
  kTimeLimitSignal,
  kLoaderFrame,
  kAbruptExit,
  kRuntimeMark,
  kEpochStamp,
  kClockStamp,
  kStackDump,
  kFatalPythonError,
  kCheckpointWord,
  kSpawnFailedProcess,
};

struct FactPattern {
  const char* expression;  // Hyperscan syntax
  bool line_start;         // `^` anchors at a line start (multiline)
  Fact fact;
  // Given, what Hyperscan matches instead of `expression`: its alternatives,
  // each under the pattern's id (scan_patterns.h PatternDef::parts).
  std::vector<std::string> parts = {};
  // Given, the expression's line-start alternatives, read in the scan's walk
  // over lines instead (scan_patterns.h PatternDef::at_line_start).
  LineStartTest at_line_start = nullptr;
  // Given, the whole expression, read in the scan's walk over lines
  // instead (scan_patterns.h PatternDef::on_every_line).
  LineTest on_every_line = nullptr;
};
const std::vector<FactPattern>& FactPatterns();

}  // namespace jobmon::triage
