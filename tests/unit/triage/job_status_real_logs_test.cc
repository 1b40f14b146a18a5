// Status on the real PyTorch DDP logs (tests/fixtures/real/pytorch, README
// table), with Slurm's state and exit code taken from the `scontrol show
// job` text recorded beside each log: a finished, failed, cancelled,
// timed-out or node-failed real job is never unknown-death once Slurm's
// view is given, and a healthy one is completed whether or not its step
// lines are recognised.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

const std::string kDir = std::string(JOBMON_FIXTURES) + "/real/pytorch/";

// "JobState=FAILED" / "ExitCode=143:0" from `scontrol show job` text.
std::string Field(const std::string& text, const std::string& key) {
  size_t at = text.find(" " + key + "=");
  if (at == std::string::npos) return "";
  at += key.size() + 2;
  return text.substr(at, text.find_first_of(" \n", at) - at);
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TriageReport TriageWithSlurm(const std::string& name, std::string* state = nullptr) {
  std::string scontrol = Read(kDir + name + ".slurm.txt");
  std::string job_state = Field(scontrol, "JobState");
  auto exit_code = ParseSlurmExitCode(Field(scontrol, "ExitCode"));
  EXPECT_FALSE(job_state.empty()) << name;
  EXPECT_TRUE(exit_code) << name;
  if (state) *state = job_state;
  auto facts = SharedScanner().ScanFile(kDir + name + ".log");
  EXPECT_TRUE(facts) << name;
  AnalysisContext context;
  context.slurm_state = job_state;
  context.slurm_exit_code = exit_code;
  return Analyze(*facts, context);
}

TEST(RealStatus, EverySlurmEndStateGetsItsStatus) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    std::string file = entry.path().filename().string();
    if (!file.ends_with(".slurm.txt")) continue;
    std::string name = file.substr(0, file.size() - std::string(".slurm.txt").size());
    SCOPED_TRACE(name);
    std::string state;
    TriageReport r = TriageWithSlurm(name, &state);
    ++seen;
    EXPECT_NE(r.status, JobStatus::kUnknownDeath) << r.status_basis;
    EXPECT_NE(r.status_basis.find("Slurm " + state), std::string::npos) << r.status_basis;
    if (state == "COMPLETED" && name == "srun-usr1-checkpoint") {
      // It stopped itself on Slurm's time-limit warning, short of its plan.
      EXPECT_EQ(r.status, JobStatus::kCancelled) << r.status_basis;
      EXPECT_EQ(r.primary, "train-timeout");
      EXPECT_EQ(r.progress.steps_lost, 0);
    } else if (state == "COMPLETED") {
      EXPECT_EQ(r.status, JobStatus::kCompleted) << r.status_basis;
      EXPECT_EQ(r.primary, "none");
    } else if (state == "FAILED" || state == "NODE_FAIL") {
      EXPECT_EQ(r.status, JobStatus::kFailed) << r.status_basis;
      EXPECT_NE(r.primary, "none");
    } else if (state == "CANCELLED" || state == "TIMEOUT") {
      EXPECT_EQ(r.status, JobStatus::kCancelled) << r.status_basis;
      EXPECT_NE(r.primary, "none");
    } else {
      ADD_FAILURE() << "a fixture state the README does not list: " << state;
    }
  }
  EXPECT_EQ(seen, 45) << "the README lists 45 fixtures with a .slurm.txt";
}

TEST(RealStatus, SlurmsEndClassWhenTheLogNamesNoCause) {
  // srun-node-fail: NODE_FAIL 0:15; its log's own lines are the cancel
  // banner and a gloo error on the surviving rank, which are consequences.
  TriageReport node = TriageWithSlurm("srun-node-fail");
  EXPECT_EQ(node.status, JobStatus::kFailed);
  // srun-timelimit: TIMEOUT 0:15 after healthy steps; the banner alone.
  TriageReport timeout = TriageWithSlurm("srun-timelimit");
  EXPECT_EQ(timeout.status, JobStatus::kCancelled);
  EXPECT_EQ(timeout.slurm_exit_code, "0:15");
  bool listed = false;
  for (const auto& c : timeout.classes) listed |= c.id == timeout.primary;
  EXPECT_TRUE(listed) << "the primary " << timeout.primary << " is among the classes";
}

TEST(RealStatus, HealthyWithoutSlurmIsNotUnknownDeath) {
  // No Slurm, no JOB SUMMARY, a log that stopped long ago: jobmon cannot
  // tell a finished job from a silent one, and must not claim a death.
  for (const char* name : {"srun-healthy", "torchrun-healthy"}) {
    auto facts = SharedScanner().ScanFile(kDir + name + ".log");
    ASSERT_TRUE(facts) << name;
    AnalysisContext context;
    context.wall_clock_now = 4102444800;  // 2100-01-01: long after the log
    TriageReport r = Analyze(*facts, context);
    EXPECT_NE(r.status, JobStatus::kUnknownDeath) << name << ": " << r.status_basis;
    EXPECT_NE(r.status, JobStatus::kRunning) << name << ": " << r.status_basis;
  }
}

}  // namespace
}  // namespace jobmon::triage
