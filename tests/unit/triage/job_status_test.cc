// The status decision table (docs/concepts.md, "Job status"), one row per
// rule, plus Slurm's state names and ExitCode text.

#include "jobmon/triage/job_status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jobmon::triage {
namespace {

struct Row {
  const char* name;
  StatusInputs in;
  JobStatus status;
  const char* implied;  // the class Slurm's view implies
  const char* basis;    // a part of the basis the report must show
};

SlurmView Slurm(const char* state, std::optional<SlurmExitCode> exit = std::nullopt) {
  return SlurmView{state, exit};
}

StatusInputs With(std::optional<SlurmView> slurm, auto&& edit) {
  StatusInputs in;
  in.slurm = std::move(slurm);
  edit(in);
  return in;
}

const auto kNothing = [](StatusInputs&) {};
const auto kSteppingLive = [](StatusInputs& in) {
  in.has_steps = true;
  in.seconds_since_last_step = 3;
  in.seconds_silent = 3;
};
const auto kStalledShort = [](StatusInputs& in) {
  in.has_steps = true;
  in.steps_stalled = true;
  in.stopped_short = true;
  in.seconds_since_last_step = 7200;
  in.seconds_silent = 7200;
};
const auto kSilentNoSteps = [](StatusInputs& in) { in.seconds_silent = 3600; };
const auto kTimeLimitStop = [](StatusInputs& in) {
  kStalledShort(in);
  in.time_limit_signal = "its time-limit warning signal (line 9)";
};

std::vector<Row> Table() {
  const SlurmExitCode ok{0, 0}, sigterm_script{143, 0}, sig15{0, 15}, sig9{0, 9}, one{1, 0};
  return {
      // The launcher's JOB SUMMARY outranks everything.
      {"summary 0", With(Slurm("FAILED", one), [](auto& in) { in.summary_exit = 0; }),
       JobStatus::kCompleted, "", "JOB SUMMARY: exit 0"},
      {"summary 143", With(std::nullopt, [](auto& in) { in.summary_exit = 143; }),
       JobStatus::kCancelled, "", "JOB SUMMARY: exit 143"},
      {"summary 1", With(std::nullopt, [](auto& in) { in.summary_exit = 1; }), JobStatus::kFailed,
       "", "JOB SUMMARY: exit 1"},

      // Slurm COMPLETED 0:0 is never unknown-death, whatever the log lacks.
      {"COMPLETED 0:0, log without steps", With(Slurm("COMPLETED", ok), kSilentNoSteps),
       JobStatus::kCompleted, "", "Slurm COMPLETED 0:0"},
      {"COMPLETED 0:0, steps stopped short", With(Slurm("COMPLETED", ok), kStalledShort),
       JobStatus::kCompleted, "", "Slurm COMPLETED 0:0"},
      {"COMPLETED 0:0 with a failure in the log",
       With(Slurm("COMPLETED", ok), [](auto& in) { in.failure_class = "python-exception"; }),
       JobStatus::kCompleted, "", "Slurm COMPLETED 0:0"},
      {"COMPLETED without exit code", With(Slurm("COMPLETED"), kNothing), JobStatus::kCompleted, "",
       "Slurm COMPLETED"},
      // Stopped short on its time-limit warning: a time-limit stop, whoever reports the end.
      {"COMPLETED 0:0, stopped short on the time-limit warning",
       With(Slurm("COMPLETED", ok), kTimeLimitStop), JobStatus::kCancelled, "train-timeout",
       "Slurm COMPLETED 0:0, but training stopped short"},
      {"summary 0, stopped short on the time-limit warning",
       With(std::nullopt,
            [](auto& in) {
              kTimeLimitStop(in);
              in.summary_exit = 0;
            }),
       JobStatus::kCancelled, "train-timeout", "JOB SUMMARY: exit 0, but training stopped short"},
      {"no Slurm, stopped short on the time-limit warning", With(std::nullopt, kTimeLimitStop),
       JobStatus::kCancelled, "train-timeout", "a time-limit stop with a checkpoint"},
      {"COMPLETED 0:0, the warning handled but the plan reached",
       With(Slurm("COMPLETED", ok),
            [](auto& in) {
              kTimeLimitStop(in);
              in.stopped_short = false;
            }),
       JobStatus::kCompleted, "", "Slurm COMPLETED 0:0"},

      // Ended states: their status, the class Slurm implies, the log's root named.
      {"FAILED 143:0, log names the root",
       With(Slurm("FAILED", sigterm_script), [](auto& in) { in.failure_class = "nccl-timeout"; }),
       JobStatus::kFailed, "", "the log shows nccl-timeout first"},
      {"FAILED 1:0, log names nothing", With(Slurm("FAILED", one), kNothing), JobStatus::kFailed,
       "subprocess-fail", "the log names no cause"},
      {"FAILED 0:9, log names nothing", With(Slurm("FAILED", sig9), kNothing), JobStatus::kFailed,
       "signal-kill", "Slurm FAILED 0:9"},
      {"FAILED without exit code, nothing in the log", With(Slurm("FAILED"), kStalledShort),
       JobStatus::kUnknownDeath, "", "without an exit code"},
      {"CANCELLED 0:15", With(Slurm("CANCELLED", sig15), kNothing), JobStatus::kCancelled,
       "cancelled", "Slurm CANCELLED 0:15"},
      {"sacct's CANCELLED by UID", With(Slurm("CANCELLED by 1000", sig15), kNothing),
       JobStatus::kCancelled, "cancelled", "CANCELLED by 1000"},
      {"TIMEOUT 0:15 after a gloo timeout",
       With(Slurm("TIMEOUT", sig15), [](auto& in) { in.failure_class = "nccl-timeout"; }),
       JobStatus::kCancelled, "train-timeout", "time limit; the log shows nccl-timeout first"},
      {"NODE_FAIL 0:15", With(Slurm("NODE_FAIL", sig15), kNothing), JobStatus::kFailed, "node-fail",
       "a node of the job failed"},
      {"BOOT_FAIL", With(Slurm("BOOT_FAIL"), kNothing), JobStatus::kFailed, "node-fail",
       "Slurm BOOT_FAIL"},
      {"OUT_OF_MEMORY 0:125", With(Slurm("OUT_OF_MEMORY", SlurmExitCode{0, 125}), kNothing),
       JobStatus::kFailed, "oom-host", "memory limit"},
      {"PREEMPTED", With(Slurm("PREEMPTED"), kNothing), JobStatus::kCancelled, "cancelled",
       "Slurm PREEMPTED"},
      {"DEADLINE", With(Slurm("DEADLINE"), kNothing), JobStatus::kCancelled, "cancelled",
       "Slurm DEADLINE"},

      // Alive: steps decide; without recognised steps, say so.
      {"RUNNING, steps advancing", With(Slurm("RUNNING"), kSteppingLive), JobStatus::kRunning, "",
       "steps advancing"},
      {"RUNNING, steps stalled",
       With(Slurm("RUNNING"),
            [](auto& in) {
              kStalledShort(in);
              in.seconds_since_last_step = 600;
            }),
       JobStatus::kHanging, "", "no step for 10m"},
      {"RUNNING, no step lines, silent", With(Slurm("RUNNING"), kSilentNoSteps),
       JobStatus::kRunning, "", "no progress recognised (no step lines); log silent for 60m"},
      {"PENDING", With(Slurm("PENDING"), kNothing), JobStatus::kRunning, "", "not started"},
      {"COMPLETING counts as alive", With(Slurm("COMPLETING"), kSteppingLive), JobStatus::kRunning,
       "", "Slurm COMPLETING"},

      // A state jobmon does not know: the log alone decides.
      {"unknown Slurm state", With(Slurm("SPECIAL_EXIT"), kStalledShort), JobStatus::kUnknownDeath,
       "", "Slurm state SPECIAL_EXIT not recognised"},

      // Without Slurm.
      {"no Slurm, log advancing, no steps",
       With(std::nullopt, [](auto& in) { in.seconds_silent = 5; }), JobStatus::kRunning, "",
       "log still advancing (last written 5s ago), no progress recognised"},
      {"no Slurm, steps advancing", With(std::nullopt, kSteppingLive), JobStatus::kRunning, "",
       "steps advancing"},
      {"no Slurm, framework completion",
       With(std::nullopt,
            [](auto& in) {
              in.completion = "the framework's completion summary at line 9";
              in.seconds_silent = 86400;
            }),
       JobStatus::kCompleted, "", "completion summary"},
      {"no Slurm, failure at the end",
       With(std::nullopt, [](auto& in) { in.failure_class = "python-exception"; }),
       JobStatus::kFailed, "", "the log ends in python-exception"},
      {"no Slurm, the cancel banner",
       With(std::nullopt, [](auto& in) { in.failure_class = "cancelled"; }), JobStatus::kCancelled,
       "", "the log ends in cancelled"},
      {"no Slurm, steps went on after the failure",
       With(std::nullopt,
            [](auto& in) {
              kSteppingLive(in);
              in.failure_class = "python-exception";
              in.steps_after_failure = true;
            }),
       JobStatus::kRunning, "", "steps advancing"},
      {"no Slurm, stopped short of the planned steps and silent", With(std::nullopt, kStalledShort),
       JobStatus::kUnknownDeath, "", "stopped short of its planned steps"},
      {"no Slurm, steps stopped while the log is still written",
       With(std::nullopt,
            [](auto& in) {
              kStalledShort(in);
              in.seconds_silent = 1;  // a peer's warnings keep it growing
            }),
       JobStatus::kHanging, "", "while the log is still written"},
      {"no Slurm, silent log without steps", With(std::nullopt, kSilentNoSteps),
       JobStatus::kUnknown, "", "ended or silent?"},
      {"no Slurm, stalled steps, total unknown",
       With(std::nullopt,
            [](auto& in) {
              kStalledShort(in);
              in.stopped_short = false;
            }),
       JobStatus::kUnknown, "", "log silent for 2.0h"},
  };
}

TEST(JobStatus, DecisionTable) {
  for (const Row& row : Table()) {
    SCOPED_TRACE(row.name);
    StatusDecision d = DecideJobStatus(row.in);
    EXPECT_EQ(ToString(d.status), std::string(ToString(row.status)));
    EXPECT_EQ(d.implied_class, row.implied);
    EXPECT_NE(d.basis.find(row.basis), std::string::npos) << d.basis;
    EXPECT_EQ(d.progress_unrecognised, !row.in.has_steps);
  }
}

TEST(JobStatus, CompletedWithFailureSaysSo) {
  StatusInputs in;
  in.slurm = Slurm("COMPLETED", SlurmExitCode{0, 0});
  in.failure_class = "python-exception";
  StatusDecision d = DecideJobStatus(in);
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_NE(d.findings[0].find("python-exception"), std::string::npos);
}

// With --kernel-log a matched OOM kill is the root; the basis
// names it and the log's SIGKILL as its consequence, and the status is
// decided as without it.
TEST(JobStatus, KernelOomKillIsNamedInTheBasis) {
  const std::vector<std::optional<SlurmView>> views = {
      std::nullopt, Slurm("FAILED", SlurmExitCode{0, 9}), Slurm("OUT_OF_MEMORY")};
  for (const auto& view : views) {
    SCOPED_TRACE(view ? view->state : "no Slurm");
    StatusInputs in;
    in.slurm = view;
    in.failure_class = "signal-kill";
    const StatusDecision log_only = DecideJobStatus(in);
    in.kernel_oom_kill = "python3 (pid 4242)";
    const StatusDecision d = DecideJobStatus(in);
    EXPECT_EQ(d.status, log_only.status);
    EXPECT_EQ(d.implied_class, log_only.implied_class);
    EXPECT_EQ(d.basis.find("the log ends in"), std::string::npos) << d.basis;
    EXPECT_EQ(d.basis.find("the log shows signal-kill first"), std::string::npos) << d.basis;
    EXPECT_NE(d.basis.find("the kernel's OOM killer killed python3 (pid 4242)"), std::string::npos)
        << d.basis;
    EXPECT_NE(d.basis.find("the log's signal-kill is its consequence"), std::string::npos)
        << d.basis;
  }
  // No log failure of its own: the kill alone, never "consequence".
  StatusInputs alone;
  alone.failure_class = "oom-host";
  alone.kernel_oom_kill = "python3";
  const StatusDecision d = DecideJobStatus(alone);
  EXPECT_EQ(d.status, JobStatus::kFailed);
  EXPECT_NE(d.basis.find("oom-host: the kernel's OOM killer killed python3 ("), std::string::npos)
      << d.basis;
  EXPECT_EQ(d.basis.find("consequence"), std::string::npos) << d.basis;
}

TEST(JobStatus, RunningWithoutStepsIsNeverAdvancing) {
  // A RUNNING job whose log has no recognised step lines was
  // reported "running, steps advancing" after five silent minutes.
  StatusInputs in;
  in.slurm = Slurm("RUNNING");
  in.seconds_silent = 300;
  StatusDecision d = DecideJobStatus(in);
  EXPECT_EQ(d.basis.find("advancing"), std::string::npos) << d.basis;
  EXPECT_NE(d.basis.find("log silent for 5m"), std::string::npos) << d.basis;
  EXPECT_TRUE(d.progress_unrecognised);
}

TEST(JobStatus, AnAbruptExitAfterTheStepsIsAnUnknownDeath) {
  // The runtime's word that the program ended without its clean-up, after
  // the last step, with no failure and no completion: it was killed or died.
  StatusInputs in;
  in.has_steps = true;
  in.abrupt_exit = "line 3: \"resource_tracker: There appear to be 4 leaked semaphore objects\"";
  StatusDecision d = DecideJobStatus(in);
  EXPECT_EQ(d.status, JobStatus::kUnknownDeath) << d.basis;
  EXPECT_NE(d.basis.find("without its clean-up"), std::string::npos) << d.basis;
  in.completion = "the last planned step reached";
  EXPECT_EQ(DecideJobStatus(in).status, JobStatus::kCompleted) << "completion evidence wins";
  in.completion.clear();
  in.has_steps = false;
  EXPECT_NE(DecideJobStatus(in).status, JobStatus::kUnknownDeath) << "no progress, no judgement";
}

TEST(JobStatus, ExitCodesAndSeverityAreDistinct) {
  const std::vector<JobStatus> all = {
      JobStatus::kCompleted, JobStatus::kFailed,       JobStatus::kCancelled, JobStatus::kRunning,
      JobStatus::kHanging,   JobStatus::kUnknownDeath, JobStatus::kUnknown};
  for (size_t a = 0; a < all.size(); ++a) {
    for (size_t b = a + 1; b < all.size(); ++b) {
      EXPECT_NE(ExitCodeFor(all[a]), ExitCodeFor(all[b]));
      EXPECT_NE(Severity(all[a]), Severity(all[b]));
    }
    EXPECT_NE(ExitCodeFor(all[a]), 2) << "2 is a usage error";
  }
  EXPECT_EQ(ExitCodeFor(JobStatus::kUnknown), 8);
  EXPECT_GT(Severity(JobStatus::kUnknownDeath), Severity(JobStatus::kFailed));
}

TEST(JobStatus, SlurmStateNames) {
  EXPECT_EQ(ClassifySlurmState("RUNNING"), SlurmState::kAlive);
  EXPECT_EQ(ClassifySlurmState("CANCELLED+"), SlurmState::kCancelled);
  EXPECT_EQ(ClassifySlurmState("OUT_OF_MEMORY"), SlurmState::kOutOfMemory);
  EXPECT_EQ(ClassifySlurmState("NODE_FAIL"), SlurmState::kNodeFail);
  EXPECT_EQ(ClassifySlurmState("COMPLETEDX"), SlurmState::kUnrecognised);
  EXPECT_EQ(ClassifySlurmState(""), SlurmState::kUnrecognised);
}

TEST(JobStatus, SlurmExitCodeText) {
  auto code = ParseSlurmExitCode("143:0");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->status, 143);
  EXPECT_EQ(code->signal, 0);
  code = ParseSlurmExitCode("0:15");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->signal, 15);
  for (const char* bad : {"", "0", ":0", "0:", "a:b", "1:2:3", "-1:0", "256:0", "0:0 "}) {
    EXPECT_FALSE(ParseSlurmExitCode(bad)) << bad;
  }
}

}  // namespace
}  // namespace jobmon::triage
