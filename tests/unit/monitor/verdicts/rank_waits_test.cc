// A hang's alert names the node of the rank that stopped first
// and what each rank waits on, from the exporters' task labels
// (hw_job_process_info{task}, docs/exporter.md). The shape is the dev
// cluster's real job (tests/integration/real_job_test.sh): three srun -l
// tasks on two nodes, rank 2 asleep on node2, rank 1 reading a FIFO and
// rank 0 in the collective on node1.
#include "jobmon/monitor/rank_waits.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jobmon::monitor {
namespace {

using triage::RankId;
using triage::RankProgress;

ProcessWait Process(std::string pid, std::string task, std::string wchan, int threads = 1,
                    std::string comm = "python3") {
  ProcessWait p;
  p.pid = std::move(pid);
  p.comm = std::move(comm);
  p.state = "S";
  p.wchan = std::move(wchan);
  p.task = std::move(task);
  p.threads = {{"S", threads}};
  return p;
}

HostEvidence Host(std::string name, std::vector<ProcessWait> processes) {
  HostEvidence h;
  h.host = std::move(name);
  h.job_processes = std::move(processes);
  return h;
}

// "N: rank N step S" lines: rank 2 stopped at step 29, the others at 30.
RankProgress ThreeRanks(bool with_program_rank = true) {
  RankProgress ranks;
  for (int r = 0; r < 3; ++r) {
    RankId id;
    id.task = r;
    if (with_program_rank) id.rank = r;
    ranks.Offer(id, r == 2 ? 29 : 30, std::nullopt, 100.0 + r, 10 + r);
  }
  return ranks;
}

std::vector<HostEvidence> TwoNodes() {
  return {Host("node1", {Process("100", "", "do_wait", 1, "slurm_script"),
                         Process("101", "", "do_wait", 1, "srun"),
                         Process("120", "0", "futex_wait_queue", 14),
                         Process("121", "1", "wait_for_partner", 14),
                         Process("130", "0", "pipe_read", 2, "pt_data_worker")}),
          Host("node2", {Process("220", "2", "hrtimer_nanosleep", 14)})};
}

TEST(RankWaits, TheRankThatStoppedFirstIsNamedWithItsTaskAndNode) {
  const RankWaits w = DescribeRankWaits(ThreeRanks(), TwoNodes());
  EXPECT_EQ(w.stopped,
            "rank 2 (task 2 on node2) stopped first: at step 29, 1 step behind the other 2 ranks "
            "(at step 30)");
  const std::vector<std::string> expected = {
      // The one that stopped first, then the others by task; a task's
      // busiest process first (the rank before its DataLoader worker).
      "task 2 on node2: python3 pid 220 S in hrtimer_nanosleep (14 threads: 14 S)",
      "task 0 on node1: python3 pid 120 S in futex_wait_queue (14 threads: 14 S); "
      "pt_data_worker pid 130 S in pipe_read (2 threads: 2 S)",
      "task 1 on node1: python3 pid 121 S in wait_for_partner (14 threads: 14 S)"};
  EXPECT_EQ(w.waits, expected);
  EXPECT_EQ(w.stopped_hosts, std::vector<std::string>{"node2"}) << "recovery's node to exclude";
}

TEST(RankWaits, ATaskLabelAloneSaysOnlyTheNode) {
  // srun -l's label and no rank in the text: "task 2" already names the task.
  const RankWaits w = DescribeRankWaits(ThreeRanks(false), TwoNodes());
  EXPECT_EQ(w.stopped.rfind("task 2 (on node2) stopped first: at step 29", 0), 0u) << w.stopped;
}

TEST(RankWaits, WithoutTaskLabelsTheSentenceIsTriagesOwn) {
  std::vector<HostEvidence> unlabelled = TwoNodes();
  for (auto& host : unlabelled) {
    for (auto& p : host.job_processes) p.task.clear();
  }
  const RankProgress ranks = ThreeRanks();
  const RankWaits w = DescribeRankWaits(ranks, unlabelled);
  EXPECT_EQ(w.stopped, RankProgress::Describe(*ranks.Stopped()));
  EXPECT_TRUE(w.waits.empty());
  EXPECT_TRUE(w.stopped_hosts.empty()) << "no task label: no node known";
  EXPECT_EQ(DescribeRankWaits(ranks, {}).stopped, RankProgress::Describe(*ranks.Stopped()));
}

TEST(RankWaits, OneRankPrintingChangesNothing) {
  RankProgress one;
  one.Offer(RankId{0, -1, -1}, 30, std::nullopt, 100.0, 1);
  const RankWaits w = DescribeRankWaits(one, TwoNodes());
  EXPECT_EQ(w.stopped, "");
  EXPECT_TRUE(w.waits.empty());
}

TEST(RankWaits, AllStoppedTogetherStillSaysWhereEachWaits) {
  RankProgress ranks;
  for (int r = 0; r < 3; ++r) ranks.Offer(RankId{r, -1, r}, 30, std::nullopt, 100.0, 10 + r);
  const RankWaits w = DescribeRankWaits(ranks, TwoNodes());
  EXPECT_EQ(w.stopped, "") << "nothing tells them apart";
  ASSERT_EQ(w.waits.size(), 3u);
  EXPECT_EQ(w.waits[0].rfind("task 0 on node1: ", 0), 0u) << w.waits[0];
  EXPECT_EQ(w.waits[2].rfind("task 2 on node2: ", 0), 0u) << w.waits[2];
}

TEST(RankWaits, BoundedWhateverTheHostsReport) {
  // One task's 10 processes on two hosts (two steps at once), and 20 more
  // tasks that print no step.
  std::vector<HostEvidence> hosts = TwoNodes();
  for (int i = 0; i < 10; ++i) {
    hosts[i % 2].job_processes.push_back(Process(std::to_string(500 + i), "2", "futex_wait_queue"));
  }
  for (int task = 10; task < 30; ++task) {
    hosts[0].job_processes.push_back(
        Process(std::to_string(600 + task), std::to_string(task), "x"));
  }
  const RankWaits w = DescribeRankWaits(ThreeRanks(), hosts);
  EXPECT_EQ(w.stopped.rfind("rank 2 (task 2 on node1 and node2) stopped first", 0), 0u)
      << w.stopped;
  ASSERT_EQ(w.waits.size(), kMaxRankWaitLines);
  EXPECT_NE(w.waits[0].find("; 8 more"), std::string::npos) << w.waits[0];
  EXPECT_EQ(w.waits[3].rfind("task 10 on node1: ", 0), 0u) << "the ranks' tasks come first";
}

}  // namespace
}  // namespace jobmon::monitor
