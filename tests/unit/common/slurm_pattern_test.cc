// Slurm's filename patterns, read once (common/include/jobmon/common/slurm_pattern.h)
// for the plugin, the Slurm client, the daemon and the CLI.
#include "jobmon/common/slurm_pattern.h"

#include <gtest/gtest.h>

namespace jobmon::slurm_pattern {
namespace {

JobFields ArrayTask() {
  return {.job_id = 42,
          .array_job_id = 40,
          .array_task_id = 13,
          .user = "alice",
          .name = "llama 7b",
          .batch_host = "node7",
          .work_dir = "/w"};
}

TEST(SlurmPattern, StdioAsSlurmExpandsTheBatchScriptsOutput) {
  JobFields job = ArrayTask();
  EXPECT_EQ(ExpandStdio("/o/%A_%a-%b.log", job), "/o/40_13-3.log");
  EXPECT_EQ(ExpandStdio("/o/%5j.%J", job), "/o/00042.42");
  EXPECT_EQ(ExpandStdio("/o/%u/%x", job), "/o/alice/llama 7b");
  EXPECT_EQ(ExpandStdio("/o/%N-%t-%n-%s", job), "/o/node7-0-0-batch");
  EXPECT_EQ(ExpandStdio("/o/%12j", job), "/o/0000000042") << "widths stop at 10";
  EXPECT_EQ(ExpandStdio("/o/%q-%3q-%r", job), "/o/%q-%3q-%r") << "not ours: as written";
  EXPECT_EQ(ExpandStdio("/o/100%%", job), "/o/100%");
  EXPECT_EQ(ExpandStdio("/o/%j\\%j", job), "/o/%j%j") << "a backslash turns expansion off";
  EXPECT_EQ(ExpandStdio("out-%j.log", job), "/w/out-42.log");
  job.batch_host.clear();
  EXPECT_EQ(ExpandStdio("/o/%N", job), "/o/%N") << "the batch host not known yet";
}

TEST(SlurmPattern, DefaultStdoutInAndOutsideAnArray) {
  JobFields job = ArrayTask();
  EXPECT_EQ(StdoutPath("", job), "/w/slurm-40_13.out");
  job.array_task_id.reset();
  job.array_job_id = 0;
  EXPECT_EQ(StdoutPath("", job), "/w/slurm-42.out");
  EXPECT_EQ(ExpandStdio("%A", job), "/w/42") << "outside an array %A is the job id";
}

TEST(SlurmPattern, DirectoryOfAPath) {
  EXPECT_EQ(DirectoryOf("/a/b/c.log", "/w"), "/a/b");
  EXPECT_EQ(DirectoryOf("/c.log", "/w"), "/");
  EXPECT_EQ(DirectoryOf("c.log", "/w"), "/w");
}

TEST(SlurmPattern, DiagDirTakesTheJobLevelLettersAndO) {
  JobFields job = ArrayTask();
  EXPECT_EQ(*ExpandDiagDir("%o/jobmon-diag-%j", job, "/shared/runs"),
            "/shared/runs/jobmon-diag-42");
  EXPECT_EQ(*ExpandDiagDir("/d/%u/%x-%5j", job, "/o"), "/d/alice/llama 7b-00042");
  EXPECT_EQ(*ExpandDiagDir("/d/%A_%a/%N/%%", job, "/o"), "/d/40_13/node7/%");
}

TEST(SlurmPattern, DiagDirRefusesWhatNamesNoOneDirectory) {
  JobFields job = ArrayTask();
  auto unknown = ExpandDiagDir("/d/%q", job, "/o");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown pattern %q"), std::string::npos);
  EXPECT_FALSE(ExpandDiagDir("/d/%t", job, "/o").ok()) << "per task";
  EXPECT_FALSE(ExpandDiagDir("/d/%s", job, "/o").ok()) << "per step";
  EXPECT_FALSE(ExpandDiagDir("/d/%", job, "/o").ok());
  EXPECT_FALSE(ExpandDiagDir("/d/%5", job, "/o").ok());
  job.batch_host.clear();
  auto no_host = ExpandDiagDir("/d/%N", job, "/o");
  ASSERT_FALSE(no_host.ok());
  EXPECT_NE(no_host.error().message.find("batch host"), std::string::npos);
  EXPECT_TRUE(CheckDiagDirPattern("%o/jobmon-diag-%5j-%a").ok());
  EXPECT_FALSE(CheckDiagDirPattern("%o/%y").ok());
}

TEST(SlurmPattern, OwnLettersAreStrict) {
  EXPECT_EQ(*ExpandLetters("%d/%n-%j", {{'d', "/diag"}, {'n', "node1"}, {'j', "7"}}),
            "/diag/node1-7");
  EXPECT_FALSE(ExpandLetters("%5j", {{'j', "7"}}).ok()) << "no widths on our own letters";
  EXPECT_FALSE(ExpandLetters("%x", {{'j', "7"}}).ok());
}

}  // namespace
}  // namespace jobmon::slurm_pattern
