// The monitor (JobProgress, following a live log) and `jobmon triage` (the
// scanner over the finished log) report the same step for the same lines:
// both read them through triage::RecogniseLine / the step parsers and
// triage::StepFilter. Fed real programs' output (tests/fixtures/real).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobmon/monitor/job_progress.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"

namespace jobmon::monitor {
namespace {

namespace fs = std::filesystem;

triage::StallRule Policy() { return triage::StallRule{}; }

struct Both {
  std::string triage_profile;
  std::optional<int64_t> triage_last;
  std::optional<triage::StepProfile> monitor_profile;
  std::optional<int64_t> monitor_last;
};

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The whole text through the scanner; the same text through JobProgress,
// written and polled line by line as a follower sees a live log.
Both ThroughBoth(const std::string& text) {
  Both both;
  auto scanner = triage::LogScanner::Create({});
  EXPECT_TRUE(scanner.ok());
  auto facts = scanner.value()->ScanText(text);
  EXPECT_TRUE(facts.ok());
  triage::Progress progress = triage::Analyze(*facts, {}).progress;
  both.triage_profile = progress.profile;
  both.triage_last = progress.last_step;

  fs::path log = fs::temp_directory_path() /
                 ("jobmon-parity-" + std::to_string(getpid()) + "-" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  JobProgress job(1, log.string(), Policy(), 0);
  double now = 100;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::ofstream(log, std::ios::app | std::ios::binary) << line << '\n';
    EXPECT_TRUE(job.Poll(now).ok());
    now += 1;
  }
  fs::remove(log);
  both.monitor_profile = job.profile();
  both.monitor_last = job.Evaluate(now).last_step;
  return both;
}

std::string Fixture(const std::string& relative) {
  return Read(fs::path(JOBMON_FIXTURES) / "real" / relative);
}

TEST(StepParityTest, APlainLoopCountingFromOneIsTheSameStepInBoth) {
  // train_ddp.py prints "step N loss X" for N = 1..40 (srun) and, rank 1
  // stopped at step 25, up to the step rank 0 reached (gloo timeout).
  for (const char* name : {"pytorch/srun-healthy.log", "pytorch/torchrun-healthy.log",
                           "pytorch/srun-gloo-timeout.log", "pytorch/srun-sigkill.log"}) {
    Both both = ThroughBoth(Fixture(name));
    ASSERT_TRUE(both.triage_last) << name;
    ASSERT_TRUE(both.monitor_last) << name;
    EXPECT_EQ(both.triage_profile, "generic") << name;
    EXPECT_EQ(both.monitor_profile, triage::StepProfile::kGeneric) << name;
    EXPECT_EQ(*both.monitor_last, *both.triage_last) << name;
  }
  Both healthy = ThroughBoth(Fixture("pytorch/srun-healthy.log"));
  EXPECT_EQ(*healthy.monitor_last, 39) << "\"step 40\", the 40th step, is step 39 0-based";
}

TEST(StepParityTest, ARestartedMonitorKeepsTheLoopsShift) {
  // The daemon stops after "step 20" of srun-healthy.log and restarts from
  // its saved record: "step 40" is still step 39.
  std::string text = Fixture("pytorch/srun-healthy.log");
  size_t cut = text.find("step 21 ");
  ASSERT_NE(cut, text.npos);
  fs::path log = fs::temp_directory_path() / ("jobmon-parity-restart-" + std::to_string(getpid()));
  std::ofstream(log, std::ios::binary) << text.substr(0, cut);
  JobProgress before(2, log.string(), Policy(), 0);
  ASSERT_TRUE(before.Poll(100).ok());
  EXPECT_EQ(before.Evaluate(100).last_step, 19);
  ProgressRecord saved = before.Snapshot(100);
  std::ofstream(log, std::ios::app | std::ios::binary) << text.substr(cut);
  JobProgress after(2, log.string(), Policy(), 0);
  after.Restore(saved);
  ASSERT_TRUE(after.Poll(101).ok());
  fs::remove(log);
  EXPECT_EQ(after.profile(), triage::StepProfile::kGeneric);
  EXPECT_EQ(after.Evaluate(101).last_step, 39);
}

TEST(StepParityTest, TheMonitorWaitsForThreeIncreasingGenericSamples) {
  // One stray "step N" line (a preprocessing stage) is not training.
  Both stray = ThroughBoth("step 3 of preprocessing loss 0\nloading data\nstep 9 loss 1.5\n");
  EXPECT_FALSE(stray.monitor_profile);
  EXPECT_FALSE(stray.monitor_last);
  EXPECT_FALSE(stray.triage_last);
  // Three increasing ones are: the held samples count from the first.
  Both loop = ThroughBoth("step 5 loss 1\nstep 2 loss 1\nstep 3 loss 1\nstep 4 loss 1\n");
  EXPECT_EQ(loop.monitor_profile, triage::StepProfile::kGeneric);
  EXPECT_EQ(loop.monitor_last, 4) << "a loop counting from 2: kept as printed";
  EXPECT_EQ(loop.triage_last, 4);
}

TEST(StepParityTest, TqdmFixturesGiveTheSameStepInBoth) {
  // tests/fixtures/real/tqdm: real tqdm, HF-, Lightning- and
  // accelerate-shaped bars with nested evaluation and 1/1 checkpoint bars.
  struct Case {
    const char* name;
    triage::StepProfile profile;
    int64_t last;
  };
  for (const Case& c : {Case{"tqdm/hf.log", triage::StepProfile::kHuggingFace, 19},
                        Case{"tqdm/lightning.log", triage::StepProfile::kLightning, 15},
                        Case{"tqdm/accelerate.log", triage::StepProfile::kHuggingFace, 11}}) {
    Both both = ThroughBoth(Fixture(c.name));
    EXPECT_EQ(both.monitor_profile, c.profile) << c.name;
    EXPECT_EQ(both.monitor_last, c.last) << c.name;
    EXPECT_EQ(both.triage_last, c.last) << c.name;
  }
}

TEST(StepParityTest, ABarWithAnotherTotalIsNotTheTrainingBarInBoth) {
  // HF's evaluation bar is tqdm(total=len(eval_dataloader)) with no
  // description; not nested (evaluate() called by hand mid-run), its count
  // may pass the training bar's. Lines in tqdm's own format (tqdm/std.py
  // format_meter: "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]").
  Both both = ThroughBoth(
      "\r 50%|#####     | 10/20 [00:01<00:01,  9.50it/s]\n"
      "\r 75%|#######5  | 30/40 [00:02<00:00, 12.00it/s]\n"
      "\r 55%|#####5    | 11/20 [00:02<00:01,  9.50it/s]\n");
  EXPECT_EQ(both.monitor_profile, triage::StepProfile::kHuggingFace);
  EXPECT_EQ(both.monitor_last, 10) << "11/20: step 10, not the evaluation bar's 29";
  EXPECT_EQ(both.triage_last, 10);
}

TEST(StepParityTest, EveryProgressFamilyGivesTheSameStepInBoth) {
  // tests/fixtures/real/progress: real DDP jobs in every progress family,
  // known formats and learned ones; each healthy run ends at its last step
  // (restarts within epochs and validation passes included).
  struct Case {
    const char* family;
    int64_t last;  // the run's last global step, 0-based
  };
  for (const Case& c :
       {Case{"tqdm-nested", 89}, Case{"logging-epoch-iter", 119}, Case{"bracketed", 119},
        Case{"hf-dicts", 119}, Case{"plain-step-pause", 99}, Case{"megatron-interval", 69},
        Case{"nanogpt-interval", 60}, Case{"lightning-bar", 89}, Case{"deepspeed", 59},
        Case{"torchtitan", 100}, Case{"unknown-format", 89}}) {
    SCOPED_TRACE(c.family);
    Both both = ThroughBoth(Fixture(std::string("progress/") + c.family + "-healthy.log"));
    EXPECT_TRUE(both.monitor_profile.has_value());
    EXPECT_EQ(both.triage_last, both.monitor_last) << "triage " << both.triage_profile;
    EXPECT_EQ(both.monitor_last, c.last);
  }
}

}  // namespace
}  // namespace jobmon::monitor
