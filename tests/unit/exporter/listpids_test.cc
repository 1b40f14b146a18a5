// `scontrol listpids` in the job_processes collector: the table as Slurm
// 22.05 and 25.11 printed it for real 2-node PyTorch jobs on the dev cluster
// (tests/fixtures/slurm/listpids/capture.sh), each task's pid as the task
// wrote it itself (SLURM_PROCID), the procfs stat lines of every listed pid
// for the ancestor walk, the collector on that tree with no job cgroup, and
// scontrol run for real: a stand-in script for its deadline, output bound,
// environment and cache.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "jobmon/exporter/job_process_collector.h"
#include "jobmon/exporter/listpids_command.h"
#include "jobmon/exporter/slurm_listpids.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
const fs::path kListPids = fs::path(JOBMON_FIXTURES) / "slurm/listpids";
const std::vector<std::string> kSeries = {"22.05", "25.11"};

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

// The job id in a captured table: its first row's.
std::string JobIdOf(const std::string& table) {
  std::istringstream in(table);
  std::string line, pid, job;
  std::getline(in, line);  // header
  in >> pid >> job;
  return job;
}

// pid -> SLURM_PROCID, as each task wrote it (tasks.txt).
std::map<unsigned, unsigned> TasksWritten(const fs::path& job) {
  std::map<unsigned, unsigned> tasks;
  std::istringstream in(Read(job / "tasks.txt"));
  for (unsigned procid, pid; in >> procid >> pid;) tasks[pid] = procid;
  return tasks;
}

// The captured stat of each listed pid still present at capture time.
std::vector<PidStat> StatsOf(const fs::path& job, const std::vector<ListedPid>& rows) {
  std::vector<PidStat> stats;
  std::set<unsigned> seen;
  for (const ListedPid& row : rows) {
    const fs::path stat = job / "proc" / std::to_string(row.pid) / "stat";
    if (!seen.insert(row.pid).second || !fs::exists(stat)) continue;
    stats.push_back(ParsePidStat(Read(stat)).value());
  }
  return stats;
}

struct Captured {
  std::string series, job, node;
  fs::path dir;
  std::string table;
};
std::vector<Captured> EveryCapture() {
  std::vector<Captured> all;
  for (const std::string& series : kSeries) {
    for (const std::string job : {"ranks", "spawn"}) {
      for (const std::string node : {"node1", "node2"}) {
        const fs::path dir = kListPids / series / job;
        all.push_back({series, job, node, dir, Read(dir / (node + ".txt"))});
      }
    }
  }
  return all;
}

// ---- the table ----

TEST(ListPids, EveryCaptureParsesAndItsTasksAreTheOnesTheyWroteThemselves) {
  for (const std::string& series : kSeries) {
    for (const std::string job : {"ranks", "spawn"}) {
      const fs::path dir = kListPids / series / job;
      const auto written = TasksWritten(dir);
      ASSERT_EQ(written.size(), job == "ranks" ? 3u : 2u) << dir;
      std::map<unsigned, unsigned> listed;  // pid -> task, both nodes
      for (const std::string node : {"node1", "node2"}) {
        const std::string table = Read(dir / (node + ".txt"));
        auto rows = ParseListPids(table, JobIdOf(table));
        ASSERT_TRUE(rows.ok()) << dir << " " << node << ": " << rows.error().message;
        EXPECT_GE(rows->size(), 2u) << dir << " " << node;
        for (const ListedPid& row : *rows) {
          EXPECT_GT(row.pid, 0u) << "22.05's pid -1 of the extern step is left out";
          // A task row has both ids, any other row neither.
          EXPECT_EQ(row.local_task.has_value(), row.global_task.has_value()) << row.pid;
        }
        for (const auto& [pid, task] : TaskPids(*rows)) listed[pid] = task;
      }
      EXPECT_EQ(listed, written) << dir << ": GLOBALID is SLURM_PROCID";
    }
  }
  // The ranks job's three tasks: two on node1, one on node2 (srun's block
  // distribution), whatever the version.
  for (const std::string& series : kSeries) {
    const fs::path dir = kListPids / series / "ranks";
    const std::string node2 = Read(dir / "node2.txt");
    auto on_node2 = TaskPids(ParseListPids(node2, JobIdOf(node2)).value());
    ASSERT_EQ(on_node2.size(), 1u) << series;
    EXPECT_EQ(on_node2.begin()->second, 2u) << series;
  }
}

TEST(ListPids, TheBatchStepsTaskIsNoRank) {
  // The batch script is "task 0" of step batch, and 22.05 lists the extern
  // step's as pid -1: neither is an srun task.
  for (const Captured& c : EveryCapture()) {
    auto rows = ParseListPids(c.table, JobIdOf(c.table)).value();
    bool batch = false;
    for (const ListedPid& row : rows) {
      if (row.step == "batch" && row.global_task) {
        batch = true;
        EXPECT_EQ(TaskPids(rows).count(row.pid), 0u) << c.dir << " " << c.node;
      }
    }
    EXPECT_EQ(batch, c.node == "node1") << c.dir << " " << c.node << ": the batch host";
  }
}

TEST(ListPids, NoStepOnTheNodeAndOtherJobsRows) {
  // A job with no step here: 22.05 prints the header alone, 25.11 nothing.
  auto v22 = ParseListPids(Read(kListPids / "22.05/none.txt"), "999999");
  ASSERT_TRUE(v22.ok()) << v22.error().message;
  EXPECT_TRUE(v22->empty());
  EXPECT_EQ(Read(kListPids / "22.05/none.rc"), "1\n");
  EXPECT_FALSE(ParseListPids(Read(kListPids / "25.11/none.txt"), "999999").ok());
  EXPECT_EQ(Read(kListPids / "25.11/none.rc"), "1\n");
  // The rows of another job id are not this job's.
  const std::string table = Read(kListPids / "25.11/ranks/node1.txt");
  ASSERT_FALSE(ParseListPids(table, JobIdOf(table)).value().empty());
  EXPECT_TRUE(ParseListPids(table, JobIdOf(table) + "0").value().empty());
}

TEST(ListPids, AnythingButTheTableIsAnErrorNamingTheLine) {
  const std::string header = "PID      JOBID    STEPID   LOCALID GLOBALID\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "no output"},
      {"scontrol: error: Could not establish a configuration source\n", "line 1"},
      {header + "4242     7        0        0       0\n4243     7        0\n", "line 3"},
      {header + "4242     7        0        0       x\n", "line 2"},
      {header + "4242     7        0        -1      0\n", "line 2"},
      {header + "42x      7        0        0       0\n", "line 2"},
  };
  for (const auto& [text, message] : cases) {
    auto rows = ParseListPids(text, "7");
    ASSERT_FALSE(rows.ok()) << text;
    EXPECT_NE(rows.error().message.find(message), std::string::npos)
        << text << " -> " << rows.error().message;
  }
  auto rows = ParseListPids(header + "\n4242 7 1+0 - -\r\n4243 7 1+0 0 5 \n", "7").value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].step, "1+0");
  EXPECT_EQ(TaskPids(rows), (std::map<unsigned, unsigned>{{4243, 5}}))
      << "a heterogeneous component's step is an srun step";
}

// ---- each process's task ----

TEST(ListPids, EveryCapturedProcessGetsItsTasksIdThroughItsAncestors) {
  for (const Captured& c : EveryCapture()) {
    const std::string where = c.series + " " + c.job + " " + c.node;
    auto rows = ParseListPids(c.table, JobIdOf(c.table)).value();
    const auto stats = StatsOf(c.dir, rows);
    const auto tasks = TasksOf(stats, TaskPids(rows));
    // This node's tasks, as they wrote them.
    std::set<unsigned> node_tasks;
    const auto written = TasksWritten(c.dir);
    for (const ListedPid& row : rows) {
      if (written.count(row.pid)) node_tasks.insert(written.at(row.pid));
    }
    ASSERT_FALSE(node_tasks.empty()) << where;
    size_t descendants = 0;
    for (const PidStat& p : stats) {
      auto task = tasks.find(p.pid);
      if (p.comm != "python3") {
        // slurm_script, srun, the extern step's sleep: no rank of theirs.
        EXPECT_EQ(task, tasks.end()) << where << ": " << p.comm << " " << p.pid;
        continue;
      }
      ASSERT_NE(task, tasks.end()) << where << ": python3 " << p.pid;
      if (written.count(p.pid)) {
        EXPECT_EQ(task->second, written.at(p.pid)) << where;
        continue;
      }
      ++descendants;
      EXPECT_TRUE(node_tasks.count(task->second)) << where << ": " << p.pid;
      if (node_tasks.size() == 1) {
        EXPECT_EQ(task->second, *node_tasks.begin()) << where;
      }
    }
    // ranks: a DataLoader worker per rank; spawn: 2 ranks, their workers, torch's helper.
    EXPECT_EQ(descendants, c.job == "ranks" ? node_tasks.size() : 5u) << where;
  }
}

TEST(ListPids, TheAncestorWalkIsBounded) {
  // 100 -> 101 -> ... -> 140, each the parent of the next; 100 is task 3.
  std::vector<PidStat> chain;
  for (unsigned pid = 100; pid <= 140; ++pid) {
    PidStat p;
    p.pid = pid;
    p.ppid = pid == 100 ? 1 : pid - 1;
    chain.push_back(p);
  }
  auto tasks = TasksOf(chain, {{100, 3}}, 32);
  EXPECT_EQ(tasks.at(132), 3u) << "32 parents up";
  EXPECT_EQ(tasks.count(133), 0u) << "33 parents up";
  // A loop (a fixture or a race) ends; a parent outside the set ends the walk
  // unless it is a task itself.
  PidStat a, b, c;
  a.pid = 10, a.ppid = 11;
  b.pid = 11, b.ppid = 10;
  c.pid = 12, c.ppid = 99;
  EXPECT_TRUE(TasksOf({a, b}, {{7, 1}}).empty());
  EXPECT_EQ(TasksOf({c}, {{99, 4}}).at(12), 4u);
  EXPECT_TRUE(TasksOf({c}, {{98, 4}}).empty());
}

// ---- the collector where no cgroup names the job ----

class ListPidsCollectorTest : public ::testing::Test {
 protected:
  // node1 of a capture: its procfs tree (both nodes' processes: the dev
  // cluster's nodes share one /proc), and scontrol's answer for node1.
  void Use(const std::string& series, const std::string& job) {
    dir_ = kListPids / series / job;
    fs::create_directories(root_);
    fs::copy(dir_ / "proc", proc_, fs::copy_options::recursive);
    table_ = Read(dir_ / "node1.txt");
    rows_ = ParseListPids(table_, JobIdOf(table_)).value();
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string Collect(ListPidsAnswer answer) {
    JobProcessCollector collector(proc_.string(), JobIdOf(table_), {}, [answer] { return answer; });
    auto families = collector.Collect();
    EXPECT_TRUE(families.ok());
    problems_ = collector.TakeProblems();
    return prometheus::TextSerializer().Serialize(families.value());
  }
  // The pid's hw_job_process_info line, or "".
  static std::string InfoOf(const std::string& text, unsigned pid) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("hw_job_process_info{", 0) == 0 &&
          line.find("pid=\"" + std::to_string(pid) + "\"") != line.npos) {
        return line;
      }
    }
    return "";
  }

  fs::path root_ = fs::temp_directory_path() /
                   ("jobmon-listpids-" + std::to_string(getpid()) + "-" +
                    std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::path proc_ = root_ / "proc";
  fs::path dir_;
  std::string table_;
  std::vector<ListedPid> rows_;
  std::vector<std::string> problems_;
};

TEST_F(ListPidsCollectorTest, WithoutACgroupTheListedProcessesAreReportedWithTheirTasks) {
  for (const std::string& series : kSeries) {
    fs::remove_all(root_);
    Use(series, "ranks");
    const std::string text = Collect({rows_, ""});
    EXPECT_TRUE(problems_.empty()) << problems_.front();
    const auto written = TasksWritten(dir_);
    size_t present = StatsOf(dir_, rows_).size();
    EXPECT_NE(text.find("hw_job_processes " + std::to_string(present) + "\n"), std::string::npos)
        << series << "\n"
        << text;
    size_t workers = 0;
    for (const PidStat& p : StatsOf(dir_, rows_)) {
      const std::string line = InfoOf(text, p.pid);
      ASSERT_FALSE(line.empty()) << series << ": " << p.pid << "\n" << text;
      if (p.comm != "python3") {
        EXPECT_NE(line.find("task=\"\""), std::string::npos) << line;
      } else if (written.count(p.pid)) {
        EXPECT_NE(line.find("task=\"" + std::to_string(written.at(p.pid)) + "\""), line.npos)
            << line;
      } else {
        // A rank's DataLoader worker: its parent's task.
        ++workers;
        ASSERT_TRUE(written.count(p.ppid)) << line;
        EXPECT_NE(line.find("task=\"" + std::to_string(written.at(p.ppid)) + "\""), line.npos)
            << line;
      }
    }
    EXPECT_EQ(workers, 2u) << series << ": node1's two ranks' workers";
    // node2's processes share the tree but are not node1's.
    const std::string node2 = Read(dir_ / "node2.txt");
    for (const auto& [pid, task] : TaskPids(ParseListPids(node2, JobIdOf(node2)).value())) {
      EXPECT_EQ(InfoOf(text, pid), "") << series << ": node2's task " << task;
    }
  }
}

TEST_F(ListPidsCollectorTest, ACgroupFindsTheProcessesAndListPidsStillNamesTheTasks) {
  Use("25.11", "spawn");
  // Only the node's python3 processes are in the job's cgroup here.
  std::vector<unsigned> in_cgroup;
  for (const PidStat& p : StatsOf(dir_, rows_)) {
    if (p.comm != "python3") continue;
    in_cgroup.push_back(p.pid);
    Write(proc_ / std::to_string(p.pid) / "cgroup",
          "0::/system.slice/slurmstepd.scope/job_" + JobIdOf(table_) + "/step_0/user/task_0\n");
  }
  ASSERT_EQ(in_cgroup.size(), 6u);
  const std::string text = Collect({rows_, "a problem said only where listpids is the source"});
  EXPECT_TRUE(problems_.empty()) << problems_.front();
  EXPECT_NE(text.find("hw_job_processes 6\n"), std::string::npos) << text;
  for (unsigned pid : in_cgroup) {
    EXPECT_NE(InfoOf(text, pid).find("task=\"0\""), std::string::npos) << InfoOf(text, pid);
  }
  // Without Slurm's answer the same processes, with no task known.
  const std::string unknown = Collect({});
  EXPECT_NE(unknown.find("hw_job_processes 6\n"), std::string::npos) << unknown;
  for (unsigned pid : in_cgroup) {
    EXPECT_NE(InfoOf(unknown, pid).find("task=\"\""), std::string::npos) << InfoOf(unknown, pid);
  }
}

TEST_F(ListPidsCollectorTest, NoCgroupAndNoAnswerIsAProblemWhenScontrolFailed) {
  Use("22.05", "ranks");
  std::string text = Collect({{}, "scontrol listpids: no answer within 2000ms"});
  EXPECT_NE(text.find("hw_job_processes 0\n"), std::string::npos) << text;
  EXPECT_EQ(problems_, std::vector<std::string>{"scontrol listpids: no answer within 2000ms"});
  text = Collect({});  // answered: no step of the job on this node
  EXPECT_NE(text.find("hw_job_processes 0\n"), std::string::npos) << text;
  EXPECT_TRUE(problems_.empty());
}

// ---- scontrol run for real (a stand-in script) ----

class ListPidsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(root_); }
  void TearDown() override { fs::remove_all(root_); }
  // A stand-in scontrol: records its arguments and environment, then runs `body`.
  std::string Script(const std::string& body) {
    const fs::path path = root_ / "scontrol";
    Write(path, "#!/bin/sh\necho \"$@\" >>'" + (root_ / "args").string() + "'\nenv >'" +
                    (root_ / "env").string() + "'\n" + body + "\n");
    chmod(path.c_str(), 0755);
    return path.string();
  }
  ListPidsOptions Options(const std::string& scontrol) {
    ListPidsOptions o;
    o.scontrol = scontrol;
    o.job_id = "1";
    o.node = "node1";
    return o;
  }
  size_t Runs() {
    std::istringstream in(Read(root_ / "args"));
    size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  fs::path root_ = fs::temp_directory_path() /
                   ("jobmon-scontrol-" + std::to_string(getpid()) + "-" +
                    std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
};

TEST_F(ListPidsCommandTest, AsksForTheJobOnTheNodeWithSlurmsConfigurationAlone) {
  const fs::path table = kListPids / "25.11/ranks/node1.txt";
  ListPidsOptions o = Options(Script("cat '" + table.string() + "'"));
  o.slurm_conf = "/etc/slurm-dev/slurm.conf";
  setenv("JOBMON_TEST_SECRET", "x", 1);
  ListPidsCommand command(o);
  const ListPidsAnswer& answer = command.Get();
  unsetenv("JOBMON_TEST_SECRET");
  EXPECT_EQ(answer.problem, "");
  EXPECT_EQ(answer.rows.size(), 7u);
  EXPECT_EQ(Read(root_ / "args"), "listpids 1 node1\n");
  const std::string env = Read(root_ / "env");
  EXPECT_NE(env.find("SLURM_CONF=/etc/slurm-dev/slurm.conf\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("JOBMON_TEST_SECRET"), std::string::npos) << "nothing else of ours";
}

TEST_F(ListPidsCommandTest, AnAnswerIsReusedWhileFresh) {
  const fs::path table = kListPids / "22.05/ranks/node1.txt";
  ListPidsOptions o = Options(Script("cat '" + table.string() + "'"));
  o.fresh_for = std::chrono::hours(1);
  ListPidsCommand cached(o);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(cached.Get().rows.size(), 8u);
  EXPECT_EQ(cached.runs(), 1u);
  EXPECT_EQ(Runs(), 1u);
  o.fresh_for = std::chrono::milliseconds(0);
  ListPidsCommand every(o);
  for (int i = 0; i < 3; ++i) every.Get();
  EXPECT_EQ(every.runs(), 3u);
  EXPECT_EQ(Runs(), 4u);
}

TEST_F(ListPidsCommandTest, AHungScontrolCostsOneDeadlineThenWaits) {
  ListPidsOptions o = Options(Script("exec sleep 30"));
  o.timeout = std::chrono::milliseconds(300);
  o.fresh_for = std::chrono::milliseconds(0);
  ListPidsCommand command(o);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(command.Get().problem, o.scontrol + " listpids: no answer within 300ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(command.Get().problem.empty());
  EXPECT_EQ(command.runs(), 1u) << "retried only after retry_after_failure";
}

TEST_F(ListPidsCommandTest, WhatIsNotAnAnswer) {
  // Missing program.
  ListPidsCommand missing(Options((root_ / "nowhere/scontrol").string()));
  EXPECT_NE(missing.Get().problem.find("cannot be run"), std::string::npos);
  // No step of the job here: 22.05's header alone, exit 1. No problem.
  const fs::path none = kListPids / "22.05/none.txt";
  ListPidsCommand no_step(Options(Script("cat '" + none.string() + "'; exit 1")));
  EXPECT_EQ(no_step.Get().problem, "");
  EXPECT_TRUE(no_step.Get().rows.empty());
  // Exit 0 with something else than the table.
  ListPidsCommand junk(Options(Script("echo hello")));
  EXPECT_NE(junk.Get().problem.find("not listpids' header"), std::string::npos);
}

TEST_F(ListPidsCommandTest, TheOutputIsBoundedToWholeRows) {
  // 100,000 rows (~4.6 MB) where 64 KiB are read: the rows that fit, whole.
  ListPidsOptions o = Options(
      Script("echo 'PID      JOBID    STEPID   LOCALID GLOBALID'\n"
             "i=1; while [ $i -le 100000 ]; do echo \"$i        1        0        -       -\"; "
             "i=$((i+1)); done"));
  o.max_output = 64 << 10;
  o.timeout = std::chrono::seconds(20);
  ListPidsCommand command(o);
  const ListPidsAnswer& answer = command.Get();
  EXPECT_EQ(answer.problem, "");
  EXPECT_GT(answer.rows.size(), 1000u);
  EXPECT_LT(answer.rows.size(), 2000u);
  EXPECT_EQ(answer.rows.back().pid, answer.rows.size()) << "no row cut in half";
}

}  // namespace
}  // namespace jobmon::exporter
