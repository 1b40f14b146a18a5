// The incident policy, one row per behaviour of the monitor (what
// Monitor::PollJob, OnHeartbeat and OnEnded did inline before the policy
// had its own home; daemon_core_test and the monitor_live integration test
// pin the same behaviour end to end).

#include "jobmon/monitor/incident_policy.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace jobmon::monitor {
namespace {

using triage::JobStatus;
using A = IncidentAction;

constexpr double kFactor = 1.3;  // slowdown_factor, the config's default

std::optional<OpenIncidentFacts> Opened(const std::string& klass, double at = 100) {
  return OpenIncidentFacts{klass, at};
}

ProgressState Stalled(std::optional<int64_t> last_step = 40) {
  ProgressState s;
  s.phase = Phase::kStalled;
  s.last_step = last_step;
  if (last_step) s.last_step_time = 90;
  return s;
}

ProgressState Training(double last_step_time, std::optional<double> slowdown = std::nullopt) {
  ProgressState s;
  s.phase = Phase::kTraining;
  s.last_step = 41;
  s.last_step_time = last_step_time;
  s.slowdown = slowdown;
  s.slowdown_significant = slowdown.has_value();
  return s;
}

// A slowdown the tracker did not find significant (its window overlaps the
// baseline's), one inside an announced phase, and a state judged blind.
ProgressState Noisy(double slowdown) {
  ProgressState s = Training(150, slowdown);
  s.slowdown_significant = false;
  return s;
}
ProgressState InEvaluation(double slowdown) {
  ProgressState s = Training(150, slowdown);
  s.announced_phase = triage::PhaseKind::kEvaluation;
  return s;
}
ProgressState Blind(Phase phase) {
  ProgressState s = Training(90);
  s.phase = phase;
  s.blind = true;
  return s;
}

struct ProgressRow {
  const char* name;
  ProgressState state;
  std::optional<OpenIncidentFacts> open;
  std::string stall_class;
  IncidentDecision want;
};

TEST(IncidentPolicy, OnProgress) {
  const std::vector<ProgressRow> rows = {
      {"starting: nothing, whatever is open", ProgressState{}, std::nullopt, "", {}},
      {"healthy training: nothing", Training(200, 1.0), std::nullopt, "", {}},
      {"training before the baseline exists: nothing", Training(200), std::nullopt, "", {}},
      {"stall with nothing open: opens the stall's class",
       Stalled(),
       std::nullopt,
       "hang/busy-wait",
       {A::kOpen, "hang/busy-wait", "", false}},
      {"no step within the startup grace: hang/startup",
       Stalled(std::nullopt),
       std::nullopt,
       "hang/startup",
       {A::kOpen, "hang/startup", "", false}},
      {"slow-not-hung is a stall class too",
       Stalled(),
       std::nullopt,
       "slow-not-hung",
       {A::kOpen, "slow-not-hung", "", false}},
      {"a slow job that now stopped: the stall supersedes tgs-degradation",
       Stalled(),
       Opened("tgs-degradation"),
       "hang/node-death",
       {A::kSupersede, "hang/node-death", "superseded", false}},
      {"still stalled with its hang open: nothing",
       Stalled(),
       Opened("hang/busy-wait"),
       "hang",
       {}},
      {"stalled under a heartbeat incident: the heartbeat stands",
       Stalled(),
       Opened("heartbeat/false-positive"),
       "hang",
       {}},
      {"a step after the hang opened: resumed",
       Training(150),
       Opened("hang", 100),
       "",
       {A::kClose, "", "resumed", false}},
      {"recovery closes slow-not-hung too",
       Training(150, 1.0),
       Opened("slow-not-hung", 100),
       "",
       {A::kClose, "", "resumed", false}},
      {"training, but no step since the hang opened: it stays",
       Training(100),
       Opened("hang", 100),
       "",
       {}},
      {"a step after a heartbeat incident does not close it",
       Training(150),
       Opened("heartbeat/true-positive", 100),
       "",
       {}},
      {"resumed but slow: the hang gives way to tgs-degradation",
       Training(150, 1.5),
       Opened("hang/straggler", 100),
       "",
       {A::kSupersede, "tgs-degradation", "resumed", false}},
      {"slowdown at the factor opens tgs-degradation (slow, not hung)",
       Training(150, 1.3),
       std::nullopt,
       "",
       {A::kOpen, "tgs-degradation", "", false}},
      {"slowdown just under the factor: nothing", Training(150, 1.29), std::nullopt, "", {}},
      {"a slowdown that is noise (windows overlap): nothing", Noisy(1.5), std::nullopt, "", {}},
      {"a slow pace inside an announced evaluation: nothing",
       InEvaluation(1.5),
       std::nullopt,
       "",
       {}},
      {"blind: a stall that was not watched opens nothing",
       Blind(Phase::kStalled),
       std::nullopt,
       "hang",
       {}},
      {"blind: a hang is not closed on what was not read either",
       Blind(Phase::kTraining),
       Opened("hang", 100),
       "",
       {}},
      {"still slow: tgs-degradation stays", Training(150, 1.2), Opened("tgs-degradation"), "", {}},
      {"back under half the excess: recovered",
       Training(150, 1.14),
       Opened("tgs-degradation"),
       "",
       {A::kClose, "", "recovered", false}},
      {"slow under a heartbeat incident: nothing new",
       Training(150, 2.0),
       Opened("heartbeat/false-positive"),
       "",
       {}},
  };
  for (const ProgressRow& row : rows) {
    EXPECT_EQ(DecideOnProgress(row.state, row.open, row.stall_class, kFactor), row.want)
        << row.name << ": got "
        << ToString(DecideOnProgress(row.state, row.open, row.stall_class, kFactor).action);
  }
}

struct HeartbeatRow {
  const char* name;
  std::optional<OpenIncidentFacts> open;
  std::string verdict;
  IncidentDecision want;
};

TEST(IncidentPolicy, OnHeartbeat) {
  const std::vector<HeartbeatRow> rows = {
      {"accusation of live hosts: heartbeat false positive",
       std::nullopt,
       "heartbeat/false-positive",
       {A::kOpen, "heartbeat/false-positive", "", false}},
      {"accused host dead: true positive",
       std::nullopt,
       "heartbeat/true-positive",
       {A::kOpen, "heartbeat/true-positive", "", false}},
      // One incident per job (the store's schema): the open stall stands.
      {"after an open stall: the stall stands",
       Opened("hang/node-death"),
       "heartbeat/true-positive",
       {}},
      {"after a restart with the same class open: nothing",
       Opened("heartbeat/false-positive"),
       "heartbeat/false-positive",
       {}},
  };
  for (const HeartbeatRow& row : rows) {
    EXPECT_EQ(DecideOnHeartbeat(row.open, row.verdict), row.want) << row.name;
  }
}

struct EndRow {
  const char* name;
  std::optional<OpenIncidentFacts> open;
  std::optional<EndVerdict> verdict;
  bool heartbeat_handled;
  IncidentDecision want;
};

TEST(IncidentPolicy, OnEnd) {
  const EndVerdict crashed{"python-exception", JobStatus::kFailed};
  const std::vector<EndRow> rows = {
      {"completed cleanly: nothing",
       std::nullopt,
       EndVerdict{"none", JobStatus::kCompleted},
       false,
       {}},
      {"completed with a class the log named: still nothing",
       std::nullopt,
       EndVerdict{"nccl-timeout", JobStatus::kCompleted},
       false,
       {}},
      {"crashed with nothing open: ended/<class>, over at once",
       std::nullopt,
       crashed,
       false,
       {A::kOpen, "ended/python-exception", "", true}},
      {"crashed under an open hang: the hang closes (ended), the crash is news",
       Opened("hang/busy-wait"),
       crashed,
       false,
       {A::kSupersede, "ended/python-exception", "ended", true}},
      {"no triage report (log unreadable): the open incident closes",
       Opened("hang"),
       std::nullopt,
       false,
       {A::kClose, "", "ended", false}},
      {"no triage report, nothing open: nothing", std::nullopt, std::nullopt, false, {}},
      {"a hang at the end is the open stall, whatever its class",
       Opened("hang/straggler"),
       EndVerdict{"hang", JobStatus::kHanging},
       false,
       {A::kClose, "", "ended", false}},
      {"a hang at the end under an open slowdown is news",
       Opened("tgs-degradation"),
       EndVerdict{"hang", JobStatus::kHanging},
       false,
       {A::kSupersede, "ended/hang", "ended", true}},
      {"a hang at the end with nothing open is news",
       std::nullopt,
       EndVerdict{"hang", JobStatus::kHanging},
       false,
       {A::kOpen, "ended/hang", "", true}},
      {"cancelled under an open incident: the reaction, not news",
       Opened("tgs-degradation"),
       EndVerdict{"cancelled", JobStatus::kCancelled},
       false,
       {A::kClose, "", "ended", false}},
      {"cancelled with nothing open is news",
       std::nullopt,
       EndVerdict{"cancelled", JobStatus::kCancelled},
       false,
       {A::kOpen, "ended/cancelled", "", true}},
      {"heartbeat timeout the heartbeat incident already named",
       std::nullopt,
       EndVerdict{"heartbeat-timeout", JobStatus::kFailed},
       true,
       {}},
      {"heartbeat timeout not judged live is news",
       std::nullopt,
       EndVerdict{"heartbeat-timeout", JobStatus::kFailed},
       false,
       {A::kOpen, "ended/heartbeat-timeout", "", true}},
      {"clean log, job gone: the open incident closes",
       Opened("hang"),
       EndVerdict{"none", JobStatus::kUnknown},
       false,
       {A::kClose, "", "ended", false}},
  };
  for (const EndRow& row : rows) {
    EXPECT_EQ(DecideOnEnd(row.open, row.verdict, row.heartbeat_handled), row.want) << row.name;
  }
}

TEST(IncidentPolicy, WhatProgressEnds) {
  for (const char* klass : {"hang", "hang/busy-wait", "hang/startup", "slow-not-hung"}) {
    EXPECT_TRUE(EndsOnProgress(klass)) << klass;
  }
  for (const char* klass : {"tgs-degradation", "heartbeat/false-positive", "ended/hang"}) {
    EXPECT_FALSE(EndsOnProgress(klass)) << klass;
  }
}

}  // namespace
}  // namespace jobmon::monitor
