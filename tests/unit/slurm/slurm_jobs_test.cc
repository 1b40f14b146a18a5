// Slurm's job view: squeue --json recorded from the dev cluster, a field that
// cannot inject another, stdout patterns expanded as Slurm does.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "jobmon/slurm/jobs.h"

namespace jobmon::slurm {
namespace {

TEST(SlurmJobsTest, ParsesSqueueJsonRecordedFromTheDevCluster) {
  // tests/fixtures/slurm/record.sh made it; see there for the four jobs.
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/slurm/squeue-json.json");
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseJobsJson(text.str());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_TRUE(parsed->errors.empty());
  const auto& jobs = parsed->jobs;
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].job_id, 1u);
  EXPECT_EQ(jobs[0].name, "llama-7b");
  EXPECT_EQ(jobs[0].user, "root");
  EXPECT_EQ(jobs[0].uid, 0u);
  EXPECT_EQ(jobs[0].state, "RUNNING");
  EXPECT_EQ(jobs[0].node_list, "node[1-2]");
  EXPECT_EQ(jobs[0].num_nodes, 2);
  EXPECT_EQ(jobs[0].std_out, "/tmp/jm-rec/jobs/run-1.out") << "%j expanded as scontrol does";
  EXPECT_TRUE(jobs[0].start_time.has_value());
  EXPECT_FALSE(IsTerminalState(jobs[0].state));
  EXPECT_EQ(jobs[1].name, "eval job") << "a value with a space";
  EXPECT_EQ(jobs[1].state, "FAILED");
  EXPECT_EQ(jobs[1].exit_code, "3:0");
  EXPECT_TRUE(IsTerminalState(jobs[1].state));
  EXPECT_EQ(jobs[3].user, "nobody");
  EXPECT_EQ(jobs[3].uid, 65534u);
  EXPECT_EQ(jobs[3].gid, 65534u);
  EXPECT_EQ(jobs[3].std_out, "/tmp/jm-rec/jobs/slurm-4.out") << "Slurm's default, no -o";
  EXPECT_FALSE(ParseJobsJson("No jobs in the system\n").ok());
  EXPECT_TRUE(ParseJobsJson(R"({"jobs": [{"job_id": 5}]})")->jobs.empty()) << "no user id";
}

// One job named with invalid UTF-8 (a stray byte, a truncated sequence):
// nlohmann-json rejected the whole answer and the monitor followed no job.
// Every job is read, that one with U+FFFD for what is not UTF-8.
TEST(SlurmJobsTest, OneNameWithInvalidUtf8BlindsNoJob) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/slurm/squeue-json.json");
  std::stringstream read;
  read << in.rdbuf();
  std::string text = read.str();
  const std::string name = "\"eval job\"";
  const size_t at = text.find(name);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, name.size(), "\"eval\xff job\xe2\x82\"");
  auto parsed = ParseJobsJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->jobs.size(), 4u);
  EXPECT_EQ(parsed->jobs[0].name, "llama-7b");
  EXPECT_EQ(parsed->jobs[1].job_id, 2u);
  EXPECT_EQ(parsed->jobs[1].name, "eval\xef\xbf\xbd job\xef\xbf\xbd");
  EXPECT_EQ(parsed->jobs[1].state, "FAILED");
}

TEST(SlurmJobsTest, AJobFieldCannotInjectAnotherField) {
  // Recorded: job 3 is named "x StdOut=/etc/shadow UserId=root(0)
  // NodeList=evil[1-2]" and commented " StdOut=/etc/gshadow". In the JSON
  // those are strings and nothing else.
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/slurm/squeue-json.json");
  std::stringstream text;
  text << in.rdbuf();
  auto jobs = ParseJobsJson(text.str()).value().jobs;
  ASSERT_EQ(jobs[2].job_id, 3u);
  EXPECT_EQ(jobs[2].name, "x StdOut=/etc/shadow UserId=root(0) NodeList=evil[1-2]");
  EXPECT_EQ(jobs[2].std_out, "/tmp/jm-rec/jobs/inj-3.out");
  EXPECT_EQ(jobs[2].node_list, "node2");
  // The same job in `scontrol -o show job`, recorded alongside: the text
  // form carries the injected StdOut as a field of its own.
  std::ifstream one_line(std::string(JOBMON_FIXTURES) + "/slurm/scontrol-o-show-job-injected.txt");
  std::stringstream lines;
  lines << one_line.rdbuf();
  EXPECT_NE(lines.str().find(" StdOut=/etc/shadow "), std::string::npos);
  // A hand-made answer with every trick in one job.
  auto crafted = ParseJobsJson(R"J({"jobs": [{"job_id": 9, "user_id": 1000, "group_id": 1000,
      "user_name": "mallory", "batch_flag": true, "current_working_directory": "/home/m",
      "name": "a StdOut=/etc/shadow", "comment": " StdOut=/etc/shadow UserId=root(0)",
      "mail_user": "b StdOut=/root/.ssh/id_rsa", "standard_output": "/home/m/%x-%j.out",
      "nodes": "n1"}]})J");
  ASSERT_TRUE(crafted.ok());
  ASSERT_EQ(crafted->jobs.size(), 1u);
  EXPECT_EQ(crafted->jobs[0].uid, 1000u);
  EXPECT_EQ(crafted->jobs[0].std_out, "/home/m/a StdOut=/etc/shadow-9.out");
}

TEST(SlurmJobsTest, StdoutPatternsExpandAsSlurmDoes) {
  SlurmJob job;
  job.job_id = 42;
  job.user = "alice";
  job.name = "llama";
  job.work_dir = "/w";
  EXPECT_EQ(ExpandStdoutPattern("out/%x-%j.log", job), "/w/out/llama-42.log");
  EXPECT_EQ(ExpandStdoutPattern("/o/%u-%5j-%%-%N", job), "/o/alice-00042-%-%N")
      << "%N unknown until the job runs";
  EXPECT_EQ(ExpandStdoutPattern("/o/%N.log", job, "node7"), "/o/node7.log");
  EXPECT_EQ(ExpandStdoutPattern("/o/%j\\%j.log", job), "/o/%j%j.log") << "a backslash: as written";
  EXPECT_EQ(ExpandStdoutPattern("", job), "/w/slurm-42.out");
  job.array_job_id = 40;
  job.array_task_id = 3;
  EXPECT_EQ(ExpandStdoutPattern("", job), "/w/slurm-40_3.out");
  EXPECT_EQ(ExpandStdoutPattern("/o/%A_%a-%b", job), "/o/40_3-3");
  EXPECT_EQ(ExpandStdoutPattern("/o/%4a", job), "/o/0003");
}

// Found by fuzz_monitor_inputs (tests/fuzz/regressions/monitor-batch-flag-not-a-boolean):
// a flag of another type threw nlohmann's type_error out of the parser.
TEST(SlurmJobsTest, AFlagOfAnotherTypeIsFalseNotAnException) {
  auto answer = ParseJobsJson(R"J({"jobs": [{"job_id": 9, "user_id": 1000, "group_id": 1000,
      "batch_flag": "node1", "current_working_directory": "/home/m",
      "exit_code": {"return_code": {"set": "yes", "infinite": 1, "number": 3}}}]})J");
  ASSERT_TRUE(answer.ok());
  const auto& jobs = answer->jobs;
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].std_out, "") << "not a batch job: no default stdout";
  EXPECT_EQ(jobs[0].exit_code, "") << "a return code whose 'set' is no boolean is no number";
}

}  // namespace
}  // namespace jobmon::slurm
