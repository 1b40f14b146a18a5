// ClassifyStall on NVIDIA-shaped evidence, from what an H100 measured: idle
// 71 W, ~120 W with a CUDA context open, a busy-waiting kernel 124-146 W
// at 100% utilization and the maximum SM clock (1980 MHz),
// small-model training 270-300 W, bf16 matmul training 697 W at 1372 MHz
// under the power cap. AMD-shaped evidence (no NVML signals) keeps the
// measured MI300X rules: see PlaybookOneInterpretationTable below.
#include "jobmon/monitor/stall_classifier.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace jobmon::monitor {
namespace {

constexpr double kH100MaxSmClock = 1980;
constexpr double kContextFloor = 120;

struct H100 {
  double util = 100;
  double power = 135;
  double baseline = 285;
  double sm_clock = kH100MaxSmClock;
  bool capped = false;
  double memory_util = 0;
  std::optional<double> floor = kContextFloor;
  std::optional<double> spread = 0.05;
  std::optional<int> processes = 1;
  bool nvml_signals = true;  // false: power and utilization only
};

HostEvidence Host(const std::string& name, const H100& g) {
  HostEvidence h;
  h.host = name;
  h.gpu_utilization = {g.util, g.util};
  h.gpu_power = {g.power, g.power};
  h.baseline_power = g.baseline;
  if (!g.nvml_signals) return h;
  h.idle_power_floor = g.floor;
  h.sm_clock_mhz = {g.sm_clock, g.sm_clock};
  h.sm_clock_max_mhz = kH100MaxSmClock;
  h.power_capped = g.capped;
  h.memory_utilization = {g.memory_util, g.memory_util};
  h.power_spread = g.spread;
  h.job_gpu_processes = g.processes;
  return h;
}

struct Case {
  const char* name;
  H100 node1;
  H100 node2;
  const char* expected;
};

class H100Table : public ::testing::TestWithParam<Case> {};

TEST_P(H100Table, Classifies) {
  const Case& c = GetParam();
  auto result = ClassifyStall({{Host("node1", c.node1), Host("node2", c.node2)}});
  EXPECT_EQ(result.klass, c.expected) << c.name << ": " << result.summary;
}

// Busy-wait at 124-146 W against each training level; the spin must be
// found whether or not the context floor is known.
const Case kCases[] = {
    {"spin vs large training (ratio 0.18-0.21 from 0 W)",
     {.power = 130, .baseline = 697},
     {.power = 146, .baseline = 697},
     "hang/busy-wait"},
    {"spin vs small training, floor known (ratio 0.41-0.54 from 0 W)",
     {.power = 124},
     {.power = 146, .baseline = 270},
     "hang/busy-wait"},
    {"spin vs small training, no floor: clock, memory and flat power decide",
     {.power = 146, .baseline = 270, .floor = std::nullopt},
     {.power = 140, .baseline = 270, .floor = std::nullopt},
     "hang/busy-wait"},
    {"small training still computing, slow (270-300 W)",
     {.util = 100, .power = 290, .memory_util = 35, .spread = 0.2},
     {.util = 98, .power = 275, .memory_util = 30, .spread = 0.2},
     "slow-not-hung"},
    {"large training, power-capped at 697 W and 1372 MHz",
     {.power = 697, .baseline = 697, .sm_clock = 1372, .capped = true, .memory_util = 60},
     {.power = 690, .baseline = 697, .sm_clock = 1372, .capped = true, .memory_util = 60},
     "slow-not-hung"},
    {"no floor, util high, but memory busy: not a spin (undecided band)",
     {.power = 146, .baseline = 270, .memory_util = 40, .floor = std::nullopt},
     {.power = 146, .baseline = 270, .memory_util = 40, .floor = std::nullopt},
     "hang"},
    {"no floor, power-capped clock says nothing",
     {.power = 146, .baseline = 270, .capped = true, .floor = std::nullopt},
     {.power = 146, .baseline = 270, .capped = true, .floor = std::nullopt},
     "hang"},
    {"no floor, clock below maximum",
     {.power = 146, .baseline = 270, .sm_clock = 1410, .floor = std::nullopt},
     {.power = 146, .baseline = 270, .sm_clock = 1410, .floor = std::nullopt},
     "hang"},
    {"no floor, power swinging",
     {.power = 146, .baseline = 270, .floor = std::nullopt, .spread = 0.5},
     {.power = 146, .baseline = 270, .floor = std::nullopt, .spread = 0.5},
     "hang"},
    {"one rank's process crashed: its GPUs sit at the context floor, never 0 W",
     {.power = 130},
     {.util = 0, .power = 121, .processes = 0},
     "hang/node-death"},
    {"a GPU at the context floor with the job's process still there is idle, not dead",
     {.power = 130},
     {.util = 0, .power = 121},
     "hang/busy-wait"},
    {"one host still training, the other spinning: the straggler",
     {.power = 285, .memory_util = 30},
     {.power = 135},
     "hang/straggler"},
    {"without NVML signals the AMD ratio rule stands: 0.51 of baseline is undecided",
     {.power = 146, .baseline = 285, .nvml_signals = false},
     {.power = 146, .baseline = 285, .nvml_signals = false},
     "hang"},
};

INSTANTIATE_TEST_SUITE_P(Figures, H100Table, ::testing::ValuesIn(kCases));

TEST(H100EvidenceLine, NamesTheSignalsThatDecided) {
  auto result = ClassifyStall({{Host("node1", {.power = 140, .baseline = 270})}});
  ASSERT_EQ(result.klass, "hang/busy-wait");
  ASSERT_EQ(result.evidence.size(), 1u);
  const std::string& line = result.evidence[0];
  EXPECT_NE(line.find("idle floor 120 W"), std::string::npos) << line;
  EXPECT_NE(line.find("SM clock 1980 of 1980 MHz"), std::string::npos) << line;
  EXPECT_NE(line.find("memory util 0%"), std::string::npos) << line;
}

TEST(H100EvidenceLine, SaysWhenTheJobsProcessIsGone) {
  auto result = ClassifyStall({{Host("node1", {.power = 121, .processes = 0})}});
  EXPECT_EQ(result.klass, "hang/node-death");
  EXPECT_EQ(result.hosts, std::vector<std::string>{"node1"});
  EXPECT_NE(result.evidence[0].find("no process of the job left"), std::string::npos);
}

// The MI300X-era table (AMD-shaped evidence, no NVML signals).

HostEvidence Host(std::string name, double util, double watts, double baseline = 700) {
  HostEvidence h;
  h.host = std::move(name);
  h.gpu_utilization = std::vector<double>(8, util);
  h.gpu_power = std::vector<double>(8, watts);
  h.baseline_power = baseline;
  return h;
}

TEST(ClassifyStallTest, PlaybookOneInterpretationTable) {
  auto busy = ClassifyStall({{Host("node1", 100, 300), Host("node2", 100, 290)}});
  EXPECT_EQ(busy.klass, "hang/busy-wait");
  ASSERT_EQ(busy.evidence.size(), 2u);
  EXPECT_EQ(busy.evidence[0],
            "node1: GPU util 100%, power 300 W (43% of its training baseline 700 W)");

  HostEvidence gone = Host("node2", 0, 0);
  gone.exporter_up = false;
  auto death = ClassifyStall({{Host("node1", 100, 300), gone}});
  EXPECT_EQ(death.klass, "hang/node-death");
  EXPECT_EQ(death.hosts, std::vector<std::string>{"node2"});
  EXPECT_EQ(death.evidence[1], "node2: exporter down");

  auto zero = ClassifyStall({{Host("node1", 100, 300), Host("node2", 0, 0)}});
  EXPECT_EQ(zero.klass, "hang/node-death") << "0 W is a dead node too";

  HostEvidence stale = Host("node2", 100, 300);
  stale.seconds_since_seen = 45;
  EXPECT_EQ(ClassifyStall({{Host("node1", 100, 300), stale}, 30}).klass, "hang/node-death");

  auto slow = ClassifyStall({{Host("node1", 100, 690), Host("node2", 98, 650)}});
  EXPECT_EQ(slow.klass, "slow-not-hung");

  auto straggler = ClassifyStall({{Host("node1", 100, 300), Host("node2", 100, 680)}});
  EXPECT_EQ(straggler.klass, "hang/straggler");
  EXPECT_EQ(straggler.hosts, std::vector<std::string>{"node2"});

  HostEvidence network = Host("node1", 100, 300);
  network.tcp_retransmit_rate = 250;
  network.tcp_retransmit_baseline = 2;
  auto net = ClassifyStall({{network, Host("node2", 100, 300)}});
  EXPECT_EQ(net.klass, "hang/busy-wait");
  EXPECT_NE(net.evidence[0].find("TCP retransmits 250.0/s before the stall"), std::string::npos);

  HostEvidence no_baseline = Host("node1", 100, 300);
  no_baseline.baseline_power.reset();
  EXPECT_EQ(ClassifyStall({{no_baseline}}).klass, "hang") << "no baseline: no guess";
}

// What the job's processes wait on in the kernel (the exporter's
// job_processes collector). A rank in D state is stuck in a filesystem or
// device: the others wait for it, which is not a collective deadlock.
ProcessWait Process(std::string pid, std::string state, std::string wchan) {
  ProcessWait p;
  p.pid = std::move(pid);
  p.comm = "python3";
  p.state = std::move(state);
  p.wchan = std::move(wchan);
  return p;
}

TEST(ClassifyStallTest, ARankInDStateIsAnIoWaitNotACollectiveDeadlock) {
  HostEvidence node1 = Host("node1", 100, 300), node2 = Host("node2", 100, 300);
  ProcessWait collective = Process("4241", "S", "futex_wait_queue");
  collective.threads = {{"S", 12}, {"R", 1}};
  collective.thread_wchans = {{"futex_wait_queue", 10}, {"do_epoll_wait", 2}, {"running", 1}};
  node1.job_processes = {collective};
  node2.job_processes = {Process("5150", "D", "wait_on_page_bit_common")};
  auto c = ClassifyStall({{node1, node2}});
  EXPECT_EQ(c.klass, "hang/io-wait") << c.summary;
  EXPECT_EQ(c.hosts, std::vector<std::string>{"node2"});
  EXPECT_NE(c.summary.find("node2: python3 pid 5150 D in wait_on_page_bit_common"),
            std::string::npos)
      << c.summary;
  EXPECT_NE(c.evidence[0].find("the job's processes wait on: python3 pid 4241 S in "
                               "futex_wait_queue (13 threads: 1 R, 12 S; do_epoll_wait 2, "
                               "futex_wait_queue 10, running 1)"),
            std::string::npos)
      << c.evidence[0];

  // A thread in D counts too; a rank asleep in a timer is shown, not judged.
  ProcessWait thread_blocked = Process("5150", "S", "futex_wait_queue");
  thread_blocked.threads = {{"S", 3}, {"D", 1}};
  node2.job_processes = {thread_blocked};
  EXPECT_EQ(ClassifyStall({{node1, node2}}).klass, "hang/io-wait");
  node2.job_processes = {Process("5150", "S", "hrtimer_nanosleep")};
  auto asleep = ClassifyStall({{node1, node2}});
  EXPECT_EQ(asleep.klass, "hang/busy-wait");
  EXPECT_NE(asleep.evidence[1].find("python3 pid 5150 S in hrtimer_nanosleep"), std::string::npos);

  // A thread that was in D in one scrape only (a busy disk under the job's
  // GPU writer) is not a rank stuck in the kernel: the GPUs decide.
  node2.job_processes = {thread_blocked};
  node2.d_state_seconds = 0;
  EXPECT_EQ(ClassifyStall({{node1, node2}}).klass, "hang/busy-wait");
  node2.d_state_seconds = kSustainedDStateSeconds;
  EXPECT_EQ(ClassifyStall({{node1, node2}}).klass, "hang/io-wait");
  node2.d_state_seconds.reset();

  // A dead node stays a dead node, whatever its last processes did.
  HostEvidence gone = Host("node2", 0, 0);
  gone.exporter_up = false;
  gone.job_processes = {Process("5150", "D", "wait_on_page_bit_common")};
  EXPECT_EQ(ClassifyStall({{node1, gone}}).klass, "hang/node-death");
}

// The Slurm task a process is or descends from (the exporter's
// `task` label) leads its description, and a host's line shows the ranks'
// processes before the batch script's and Slurm's own, whatever their pids.
TEST(ClassifyStallTest, ATasksProcessesComeFirstAndNameTheirTask) {
  ProcessWait rank = Process("4242", "S", "hrtimer_nanosleep");
  rank.task = "1";
  EXPECT_EQ(DescribeProcess(rank), "task 1: python3 pid 4242 S in hrtimer_nanosleep");
  EXPECT_EQ(DescribeProcess(Process("4242", "S", "hrtimer_nanosleep")),
            "python3 pid 4242 S in hrtimer_nanosleep");
  HostEvidence node1 = Host("node1", 100, 300);
  for (const char* pid : {"100", "101", "102", "103", "104"}) {
    ProcessWait helper = Process(pid, "S", "do_wait");
    helper.comm = "slurm_script";
    node1.job_processes.push_back(helper);
  }
  node1.job_processes.push_back(rank);
  auto c = ClassifyStall({{node1}});
  EXPECT_NE(c.evidence[0].find("the job's processes wait on: task 1: python3 pid 4242 S in "
                               "hrtimer_nanosleep; slurm_script pid 100 S in do_wait; "),
            std::string::npos)
      << c.evidence[0];
  EXPECT_NE(c.evidence[0].find("; 2 more"), std::string::npos) << c.evidence[0];
}

}  // namespace
}  // namespace jobmon::monitor
