// job_processes: the stat/wchan parsers against procfs files captured from
// real processes (tests/fixtures/procfs/waits/capture.sh), and the collector
// on a procfs tree of them whose cgroup files name the job.
#include "jobmon/exporter/job_process_collector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "collector_test_support.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/exporter/process_wait.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;
using test_support::Text;
const fs::path kWaits = fs::path(JOBMON_FIXTURES) / "procfs/waits";

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// role -> pid, as capture.sh recorded them.
std::map<std::string, std::string> Roles() {
  std::map<std::string, std::string> roles;
  std::istringstream in(Read(kWaits / "roles.txt"));
  for (std::string role, pid; in >> role;) {
    if (role == "#") {
      std::getline(in, role);
      continue;
    }
    in >> pid;
    roles[role] = pid;
  }
  return roles;
}

std::string Cgroup(const std::string& job) {
  return "0::/system.slice/slurmstepd.scope/job_" + job + "/step_0/user/task_0\n";
}

// A copy of the captured tree whose processes are all in job 4242's cgroup.
class JobProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(proc_);
    for (const auto& [role, pid] : roles_) {
      fs::copy(kWaits / pid, proc_ / pid, fs::copy_options::recursive);
      Write(proc_ / pid / "cgroup", Cgroup("4242"));
    }
  }

  std::string Collect(JobProcessCollector& collector) {
    auto families = collector.Collect();
    EXPECT_TRUE(families.ok());
    problems_ = collector.TakeProblems();
    return families.ok() ? Text(*families) : "";
  }
  std::string Collect(JobProcessLimits limits = {}) {
    JobProcessCollector collector(proc_.string(), "4242", limits);
    return Collect(collector);
  }
  // A process made from the captured sleep, as pid `pid` with `threads` threads.
  void AddSleeper(unsigned pid, unsigned threads, const std::string& job = "4242") {
    const std::string from = roles_.at("sleep");
    std::string stat = Read(kWaits / from / "stat");
    stat.replace(0, from.size(), std::to_string(pid));
    size_t field20 = stat.find(" 20 0 1 ");  // priority, nice, num_threads
    stat.replace(field20, 8, " 20 0 " + std::to_string(threads) + " ");
    const fs::path dir = proc_ / std::to_string(pid);
    Write(dir / "stat", stat);
    Write(dir / "wchan", "hrtimer_nanosleep");
    Write(dir / "cgroup", Cgroup(job));
    for (unsigned t = 0; t < threads; ++t) {
      Write(dir / "task" / std::to_string(pid + t) / "stat", stat);
      Write(dir / "task" / std::to_string(pid + t) / "wchan", "hrtimer_nanosleep");
    }
  }

  std::map<std::string, std::string> roles_ = Roles();
  TempDir tmp_{"waits"};
  fs::path root_ = tmp_.path;
  fs::path proc_ = root_ / "proc";
  std::vector<std::string> problems_;
};

void ExpectLines(const std::string& text, std::initializer_list<std::string> lines) {
  for (const std::string& line : lines) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << " in\n" << text;
  }
}

// ---- parsers, on the captured files ----

TEST(ProcessWait, EveryCapturedStatParsesAsTheKernelsStatusLineSays) {
  size_t files = 0;
  for (const auto& [role, pid] : Roles()) {
    const fs::path dir = kWaits / pid;
    auto stat = ParsePidStat(Read(dir / "stat"));
    ASSERT_TRUE(stat) << role;
    EXPECT_EQ(std::to_string(stat->pid), pid);
    const std::string status = Read(dir / "status");
    EXPECT_NE(status.find(std::string("\nState:\t") + stat->state + " ("), std::string::npos)
        << role << ": " << stat->state;
    EXPECT_NE(status.find("\nThreads:\t" + std::to_string(stat->threads) + "\n"), std::string::npos)
        << role;
    EXPECT_NE(status.find("\nPPid:\t" + std::to_string(stat->ppid) + "\n"), std::string::npos)
        << role;
    for (const auto& task : fs::directory_iterator(dir / "task")) {
      auto thread = ParsePidStat(Read(task.path() / "stat"));
      ASSERT_TRUE(thread) << task.path();
      EXPECT_EQ(std::to_string(thread->pid), task.path().filename().string());
      ++files;
    }
  }
  EXPECT_GE(files, 12u);
}

TEST(ProcessWait, CommEndsAtTheLastParenthesis) {
  auto roles = Roles();
  // The capture named it "evil) D (1 2 3": a parser stopping at the first
  // ')' would read state D and the wrong fields.
  auto odd = ParsePidStat(Read(kWaits / roles.at("odd_comm") / "stat")).value();
  EXPECT_EQ(odd.comm, "evil) D (1 2 3");
  EXPECT_EQ(odd.state, 'S');
  EXPECT_EQ(odd.threads, 1u);
  const std::string tail = " R 1 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 7 0 99 0 0\n";
  auto lines = ParsePidStat("12 (a\n) (b)" + tail).value();
  EXPECT_EQ(lines.comm, "a\n) (b");
  EXPECT_EQ(lines.state, 'R');
  EXPECT_EQ(lines.threads, 7u);
  EXPECT_EQ(lines.ppid, 1u);
  EXPECT_EQ(ParsePidStat("12 ()" + tail).value().comm, "");
  const std::vector<std::string> bad = {
      "",
      "12 (sleep) S 1 2 3\n",                                       // too few fields
      "12 (sleep S" + tail,                                         // no ')'
      "x2 (sleep)" + tail,                                          // no pid
      "12 (sleep) " + tail,                                         // two spaces
      "12 (sleep) 7" + tail.substr(2),                              // state not a letter
      "12 (sleep) RS" + tail.substr(2),                             // state not one letter
      "12 (sleep)" + tail.substr(0, tail.find(" 7 ")) + " -7 0\n",  // threads not a count
      "12 (sleep) R -1" + tail.substr(4),                           // ppid not a pid
  };
  for (const std::string& text : bad) {
    EXPECT_FALSE(ParsePidStat(text)) << text;
  }
}

TEST(ProcessWait, WchanLabelIsABoundedKernelSymbol) {
  auto roles = Roles();
  auto wchan = [&](const std::string& role) {
    const fs::path dir = kWaits / roles.at(role);
    return WchanLabel(Read(dir / "wchan"), ParsePidStat(Read(dir / "stat"))->state);
  };
  EXPECT_EQ(wchan("sleep"), "hrtimer_nanosleep");
  EXPECT_EQ(wchan("vfork_parent"), "kernel_clone");
  EXPECT_EQ(wchan("stopped"), "do_signal_stop");
  EXPECT_EQ(wchan("zombie"), "none");  // the kernel's "0"
  EXPECT_EQ(WchanLabel("0", 'R'), "running");
  EXPECT_EQ(WchanLabel("", 'S'), "none");
  EXPECT_EQ(WchanLabel("ep_poll.isra.0\n", 'S'), "ep_poll.isra.0");
  for (const char* unclean :
       {"evil\"} 1\nhw_x 2", "a b", "futex_wait+0x1f/0x30", "\xc3\xa9", "x\n\n"}) {
    EXPECT_EQ(WchanLabel(unclean, 'S'), "invalid") << unclean;
  }
  std::string long_symbol(300, 'f');
  EXPECT_EQ(WchanLabel(long_symbol, 'D'), std::string(kWchanLabelMax, 'f'));
}

TEST(ProcessWait, CommLabelIsBoundedPrintableAscii) {
  EXPECT_EQ(CommLabel("evil) D (1 2 3"), "evil) D (1 2 3");
  EXPECT_EQ(CommLabel("a\nb\x01\xc3\xa9\"\\"), "a?b???\"\\");
  EXPECT_EQ(CommLabel(std::string(100, 'k')), std::string(kCommLabelMax, 'k'));
}

TEST(ProcessWait, TheCapKeepsTheProcessesWithTheMostThreads) {
  std::vector<PidStat> processes;
  for (unsigned pid : {50u, 10u, 40u, 20u, 30u}) {
    processes.push_back({pid, "p", 'S', pid == 50 ? 1u : 9u});
  }
  auto kept = Busiest(processes, 3);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].pid, 10u);  // 9 threads each, the lower pids first; 50 has one
  EXPECT_EQ(kept[1].pid, 20u);
  EXPECT_EQ(kept[2].pid, 30u);
  EXPECT_EQ(Busiest(processes, 64).size(), 5u);
  EXPECT_TRUE(Busiest({}, 64).empty());
}

TEST(ProcessWait, TheLargestWaitChannelsThenOther) {
  std::map<std::string, unsigned> counts = {
      {"futex_do_wait", 30}, {"do_epoll_wait", 4}, {"running", 4}, {"pipe_read", 1}, {"a", 1}};
  using Counts = std::vector<std::pair<std::string, unsigned>>;
  EXPECT_EQ(LargestCounts(counts, 3),
            (Counts{{"do_epoll_wait", 4}, {"futex_do_wait", 30}, {"other", 2}, {"running", 4}}));
  EXPECT_EQ(LargestCounts(counts, 5).size(), 5u);
  counts["other"] = 5;  // a symbol of that name joins the bucket
  EXPECT_EQ(LargestCounts(counts, 2),
            (Counts{{"futex_do_wait", 30}, {"other", 5 + 4 + 4 + 1 + 1}}));
}

// ---- the collector, on the captured tree ----

TEST_F(JobProcessesTest, SaysWhatEachCapturedProcessWaitsOn) {
  // Not the job's: another job's process and one outside Slurm.
  AddSleeper(900001, 1, "4243");
  Write(proc_ / "900002/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
  Write(proc_ / "900002/stat", Read(proc_ / "900001/stat"));
  // The job's, gone between the listing and the read: only cgroup was read.
  Write(proc_ / "900003/cgroup", Cgroup("4242"));
  const std::string text = Collect();
  auto pid = [&](const std::string& role) { return roles_.at(role); };
  ExpectLines(
      text,
      {
          "hw_job_processes 9",
          "hw_job_process_info{comm=\"sleep\",pid=\"" + pid("sleep") +
              "\",state=\"S\",task=\"\",wchan=\"hrtimer_nanosleep\"} 1",
          "hw_job_process_info{comm=\"cat\",pid=\"" + pid("fifo_open") +
              "\",state=\"S\",task=\"\",wchan=\"wait_for_partner\"} 1",
          "hw_job_process_info{comm=\"cat\",pid=\"" + pid("fifo_read") +
              "\",state=\"S\",task=\"\",wchan=\"anon_pipe_read\"} 1",
          "hw_job_process_info{comm=\"evil) D (1 2 3\",pid=\"" + pid("odd_comm") +
              "\",state=\"S\",task=\"\",wchan=\"hrtimer_nanosleep\"} 1",
          "hw_job_process_info{comm=\"vfork\",pid=\"" + pid("vfork_parent") +
              "\",state=\"D\",task=\"\",wchan=\"kernel_clone\"} 1",
          "hw_job_process_info{comm=\"sleep\",pid=\"" + pid("stopped") +
              "\",state=\"T\",task=\"\",wchan=\"do_signal_stop\"} 1",
          "hw_job_process_info{comm=\"sleep\",pid=\"" + pid("zombie") +
              "\",state=\"Z\",task=\"\",wchan=\"none\"} 1",
          // The rank: main thread joining, one thread on a lock, one in
          // epoll_wait, one spinning.
          "hw_job_process_info{comm=\"python3\",pid=\"" + pid("rank") +
              "\",state=\"S\",task=\"\",wchan=\"futex_do_wait\"} 1",
          "hw_job_process_threads{pid=\"" + pid("rank") + "\",state=\"R\"} 1",
          "hw_job_process_threads{pid=\"" + pid("rank") + "\",state=\"S\"} 3",
          "hw_job_process_wchan_threads{pid=\"" + pid("rank") + "\",wchan=\"do_epoll_wait\"} 1",
          "hw_job_process_wchan_threads{pid=\"" + pid("rank") + "\",wchan=\"futex_do_wait\"} 2",
          "hw_job_process_wchan_threads{pid=\"" + pid("rank") + "\",wchan=\"running\"} 1",
          "hw_job_process_threads{pid=\"" + pid("vfork_parent") + "\",state=\"D\"} 1",
      });
  for (const char* absent : {"pid=\"900001\"", "pid=\"900002\"", "pid=\"900003\""}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent;
  }
  EXPECT_TRUE(problems_.empty()) << problems_.front();
  // Only the four families, each under its name in metric_names.h.
  auto families = JobProcessCollector(proc_.string(), "4242").Collect().value();
  std::vector<std::string> names;
  for (const auto& family : families) names.push_back(family.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       metric_names::kJobProcesses, metric_names::kJobProcessInfo,
                       metric_names::kJobProcessThreads, metric_names::kJobProcessWchanThreads}));
}

TEST_F(JobProcessesTest, ProcessesAndThreadsThatVanishMidReadAreSkipped) {
  const fs::path rank = proc_ / roles_.at("rank");
  const fs::path sleep = proc_ / roles_.at("sleep");
  const fs::path fifo = proc_ / roles_.at("fifo_open");
  fs::remove(sleep / "wchan");    // exited after its stat was read
  fs::remove_all(fifo / "task");  // exited before its threads were listed
  // One thread of the rank exited after the listing: its stat is gone.
  fs::path thread;
  for (const auto& task : fs::directory_iterator(rank / "task")) {
    if (task.path().filename() != rank.filename()) thread = task.path();
  }
  fs::remove(thread / "stat");
  const std::string text = Collect();
  EXPECT_EQ(text.find("pid=\"" + roles_.at("sleep") + "\""), std::string::npos) << text;
  EXPECT_EQ(text.find("pid=\"" + roles_.at("fifo_open") + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("pid=\"" + roles_.at("fifo_read") + "\""), std::string::npos) << text;
  // Three of the rank's four threads were read.
  unsigned rank_threads = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("hw_job_process_threads{pid=\"" + roles_.at("rank") + "\"", 0) == 0) {
      rank_threads += std::stoul(line.substr(line.rfind(' ') + 1));
    }
  }
  EXPECT_EQ(rank_threads, 3u);
  EXPECT_TRUE(problems_.empty()) << problems_.front();
}

TEST_F(JobProcessesTest, AtMost64ProcessesTheOnesWithTheMostThreads) {
  // 70 more processes: 10 with 2 threads, 60 with 3. With the 9 captured
  // ones (the rank has 4 threads, the others 1) the 64 kept are the rank,
  // the 60 with 3 and the three lowest pids with 2.
  for (unsigned i = 0; i < 70; ++i) AddSleeper(800000 + i * 10, i < 10 ? 2 : 3);
  const std::string text = Collect();
  size_t info = 0;
  for (size_t at = text.find("\nhw_job_process_info{"); at != text.npos;
       at = text.find("\nhw_job_process_info{", at + 1)) {
    ++info;
  }
  EXPECT_EQ(info, 64u);
  ExpectLines(text, {"hw_job_processes 79"});
  EXPECT_NE(text.find("pid=\"" + roles_.at("rank") + "\""), std::string::npos);
  EXPECT_EQ(text.find("pid=\"" + roles_.at("sleep") + "\""), std::string::npos);
  for (const char* in : {"800100", "800690", "800000", "800020"}) {
    EXPECT_NE(text.find("pid=\"" + std::string(in) + "\""), std::string::npos) << in;
  }
  EXPECT_EQ(text.find("pid=\"800030\""), std::string::npos);
  ExpectLines(text, {"hw_job_process_threads{pid=\"800100\",state=\"S\"} 3"});
}

TEST_F(JobProcessesTest, ThreadsAndWaitChannelsPerProcessAreCapped) {
  AddSleeper(700000, 12);
  const fs::path dir = proc_ / "700000";
  const char* wchans[] = {"a_wait", "b_wait", "c_wait", "d_wait", "e_wait", "f_wait"};
  for (unsigned t = 0; t < 12; ++t)
    Write(dir / "task" / std::to_string(700000 + t) / "wchan", wchans[t % 6]);
  JobProcessLimits limits;
  limits.threads = 10;
  limits.wchans = 3;
  const std::string text = Collect(limits);
  // Ten threads read: a and b twice, the rest once; three kept, by name on ties.
  ExpectLines(text, {
                        "hw_job_process_threads{pid=\"700000\",state=\"S\"} 10",
                        "hw_job_process_wchan_threads{pid=\"700000\",wchan=\"a_wait\"} 2",
                        "hw_job_process_wchan_threads{pid=\"700000\",wchan=\"b_wait\"} 2",
                        "hw_job_process_wchan_threads{pid=\"700000\",wchan=\"c_wait\"} 2",
                        "hw_job_process_wchan_threads{pid=\"700000\",wchan=\"other\"} 4",
                    });
  EXPECT_EQ(text.find("wchan=\"f_wait\""), std::string::npos);
}

TEST_F(JobProcessesTest, AnUncleanWchanAndAnOddCommStayBounded) {
  const fs::path sleep = proc_ / roles_.at("sleep");
  Write(sleep / "wchan", "evil\"} 1\nhw_fake 2");
  std::string stat = Read(sleep / "stat");
  stat.replace(stat.find("(sleep)"), 7, "(\xc3\xa9t\xe9\"\\\n)");
  Write(sleep / "stat", stat);
  const std::string text = Collect();
  // The comm: non-ASCII and control bytes as '?', then the text format's escapes.
  ExpectLines(text, {"hw_job_process_info{comm=\"??t?\\\"\\\\?\",pid=\"" + roles_.at("sleep") +
                     "\",state=\"S\",task=\"\",wchan=\"invalid\"} 1"});
  EXPECT_EQ(text.find("hw_fake"), std::string::npos);
}

TEST_F(JobProcessesTest, ABrokenFileIsAProblemAndTheOthersStillReport) {
  Write(proc_ / roles_.at("sleep") / "stat", "not a stat line\n");
  Write(proc_ / roles_.at("fifo_read") / "wchan", std::string(5000, 'w'));
  const std::string text = Collect();
  ASSERT_EQ(problems_.size(), 2u);
  EXPECT_NE(problems_[0].find(roles_.at("sleep") + "/stat: not a stat line"), std::string::npos)
      << problems_[0];
  EXPECT_NE(problems_[1].find(roles_.at("fifo_read") + "/wchan: larger than"), std::string::npos)
      << problems_[1];
  ExpectLines(text, {"hw_job_processes 8"});
  EXPECT_NE(text.find("pid=\"" + roles_.at("rank") + "\""), std::string::npos);
  EXPECT_EQ(text.find("pid=\"" + roles_.at("fifo_read") + "\""), std::string::npos);
}

TEST_F(JobProcessesTest, OffWithoutAJobIdAndZeroWhereNoProcessIsFound) {
  SourcePaths paths;
  paths.procfs = proc_.string();
  paths.scontrol = (root_ / "no-scontrol").string();  // not this machine's Slurm
  auto without = SelectCollectors(BuiltinCollectors(paths), "job_processes").value();
  EXPECT_EQ(DropUnavailable(without),
            (std::vector<std::string>{"job_processes off: needs --job-id"}));
  paths.job_id = "4242";
  auto with = SelectCollectors(BuiltinCollectors(paths), "job_processes").value();
  EXPECT_TRUE(DropUnavailable(with).empty());
  ASSERT_EQ(with.size(), 1u);
  EXPECT_NE(Text(with[0].make()->Collect().value()).find("hw_job_processes 9\n"),
            std::string::npos);
  // No process in a cgroup of the job (proctrack/linuxproc makes none).
  JobProcessCollector other(proc_.string(), "77");
  const std::string text = Collect(other);
  EXPECT_NE(text.find("\nhw_job_processes 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("hw_job_process_"), std::string::npos) << text;
}

}  // namespace
}  // namespace jobmon::exporter
