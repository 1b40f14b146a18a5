// Every Slurm version's own answers about the same jobs and nodes
// (tests/fixtures/slurm/<series>/, recorded by record-versions.sh on the
// dev cluster: Debian's 22.05 and 23.11, 24.11, 25.11 built from SchedMD's
// sources): one reading of all of them, and a controller that is down is
// never read as "no jobs".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "jobmon/slurm/client.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/slurm/nodes.h"

namespace jobmon::slurm {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(JOBMON_FIXTURES) / "slurm";

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ids.txt: "running=1 completed=3 ..." over two lines.
std::map<std::string, uint32_t> Ids(const fs::path& dir) {
  std::map<std::string, uint32_t> ids;
  std::istringstream in(Read(dir / "ids.txt"));
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) ids[word.substr(0, eq)] = std::stoul(word.substr(eq + 1));
  }
  return ids;
}

std::vector<fs::path> Versions() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kRoot)) {
    if (entry.is_directory() && fs::exists(entry.path() / "ids.txt")) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const SlurmJob* Find(const std::vector<SlurmJob>& jobs, uint32_t id) {
  for (const auto& j : jobs) {
    if (j.job_id == id) return &j;
  }
  return nullptr;
}

TEST(SlurmVersions, TheOldestAndTheNewestSeriesAreRecorded) {
  std::vector<std::string> names;
  for (const auto& v : Versions()) names.push_back(v.filename().string());
  EXPECT_NE(std::find(names.begin(), names.end(), "22.05"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "25.11"), names.end());
}

TEST(SlurmVersions, EveryJobOfEverySeriesReadsTheSame) {
  for (const fs::path& dir : Versions()) {
    SCOPED_TRACE(dir.filename().string());
    auto ids = Ids(dir);
    auto answer = ParseJobsJson(Read(dir / "squeue-all.json"));
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_TRUE(answer->errors.empty());
    const auto& jobs = answer->jobs;
    const std::string out = "/tmp/jm-ver/jobs/";

    const SlurmJob* running = Find(jobs, ids["running"]);
    ASSERT_TRUE(running);
    EXPECT_EQ(running->state, "RUNNING");
    EXPECT_EQ(running->num_nodes, 2);
    EXPECT_EQ(running->node_list, "node[1-2]");
    EXPECT_TRUE(running->start_time) << "{set, number} or a plain number";
    EXPECT_FALSE(running->end_time && *running->end_time < *running->start_time);
    EXPECT_EQ(running->std_out, out + "run-" + std::to_string(ids["running"]) + ".out");
    EXPECT_EQ(running->uid, 0u);

    const SlurmJob* completed = Find(jobs, ids["completed"]);
    ASSERT_TRUE(completed);
    EXPECT_EQ(completed->state, "COMPLETED");
    EXPECT_EQ(completed->exit_code, "0:0");
    EXPECT_TRUE(completed->end_time);
    char padded[16];
    std::snprintf(padded, sizeof padded, "%05u", ids["completed"]);
    EXPECT_EQ(completed->std_out, out + "done-" + padded + ".out") << "%5j";

    const SlurmJob* failed = Find(jobs, ids["failed"]);
    ASSERT_TRUE(failed);
    EXPECT_EQ(failed->state, "FAILED");
    EXPECT_EQ(failed->exit_code, "3:0");
    EXPECT_EQ(failed->std_out, out + "eval job-" + std::to_string(ids["failed"]) + ".out");

    const SlurmJob* cancelled = Find(jobs, ids["cancelled"]);
    ASSERT_TRUE(cancelled);
    EXPECT_EQ(cancelled->state, "CANCELLED");
    EXPECT_TRUE(IsTerminalState(cancelled->state));
    EXPECT_EQ(cancelled->std_out, out + "slurm-" + std::to_string(ids["cancelled"]) + ".out")
        << "Slurm's default";

    const SlurmJob* timeout = Find(jobs, ids["timeout"]);
    ASSERT_TRUE(timeout);
    EXPECT_EQ(timeout->state, "TIMEOUT");

    const SlurmJob* nodefail = Find(jobs, ids["nodefail"]);
    ASSERT_TRUE(nodefail);
    EXPECT_EQ(nodefail->state, "NODE_FAIL");
    EXPECT_TRUE(IsTerminalState(nodefail->state));

    // The array: four tasks, each with its own log.
    std::map<uint32_t, std::string> tasks;
    for (const auto& j : jobs) {
      if (j.array_job_id == ids["array"]) {
        ASSERT_TRUE(j.array_task_id);
        tasks[*j.array_task_id] = j.std_out;
        EXPECT_EQ(j.state, "COMPLETED");
      }
    }
    ASSERT_EQ(tasks.size(), 4u);
    for (uint32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(tasks[i],
                out + "arr-" + std::to_string(ids["array"]) + "_" + std::to_string(i) + ".out");
    }

    // The heterogeneous job: two components, one log (the leader's).
    int components = 0;
    for (const auto& j : jobs) {
      if (!j.het_job_id || *j.het_job_id != ids["het"]) continue;
      ++components;
      EXPECT_EQ(j.std_out, out + "het-" + std::to_string(ids["het"]) + ".out") << j.job_id;
    }
    EXPECT_EQ(components, 2);

    const SlurmJob* nobody = Find(jobs, ids["nobody"]);
    ASSERT_TRUE(nobody);
    EXPECT_EQ(nobody->uid, 65534u);
    EXPECT_EQ(nobody->user, "nobody");
    EXPECT_EQ(nobody->std_out, out + "slurm-" + std::to_string(ids["nobody"]) + ".out");
  }
}

// Recorded: 22.05 and 23.11 list ended jobs without a state filter; 24.11
// and 25.11 only active ones.
TEST(SlurmVersions, SqueueWithoutAStateFilterListsEndedJobsOnlyBefore2411) {
  for (const fs::path& dir : Versions()) {
    SCOPED_TRACE(dir.filename().string());
    auto ids = Ids(dir);
    auto answer = ParseJobsJson(Read(dir / "squeue.json"));
    ASSERT_TRUE(answer.ok());
    const bool old = dir.filename() < "24.11";
    EXPECT_EQ(Find(answer->jobs, ids["completed"]) != nullptr, old)
        << "why the client asks `squeue -t all`";
  }
}

TEST(SlurmVersions, NodeAddressesFromScontrolOrOn2205Sinfo) {
  for (const fs::path& dir : Versions()) {
    SCOPED_TRACE(dir.filename().string());
    const bool has_scontrol = fs::exists(dir / "scontrol-nodes.json");
    EXPECT_EQ(has_scontrol, dir.filename() != "22.05");
    auto answer = ParseNodesJson(Read(dir / (has_scontrol ? "scontrol-nodes.json" : "sinfo.json")));
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    ASSERT_EQ(answer->nodes.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(answer->nodes[i].name, "node" + std::to_string(i + 1));
      EXPECT_TRUE(answer->nodes[i].address.ends_with("." + std::to_string(11 + i)))
          << answer->nodes[i].address;
    }
    if (dir.filename() != "22.05") {
      EXPECT_FALSE(ParseNodesJson(Read(dir / "sinfo.json")).ok())
          << "23.11+'s sinfo --json has no addresses: why scontrol is asked";
    }
  }
}

// slurmctld stopped: whatever the version prints, the client says so.
TEST(SlurmVersions, AStoppedControllerIsAnErrorNeverNoJobs) {
  char tmpl[] = "/tmp/jobmon-slurm-versions-XXXXXX";
  const fs::path tmp = mkdtemp(tmpl);
  for (const fs::path& dir : Versions()) {
    SCOPED_TRACE(dir.filename().string());
    const std::string rc = Read(dir / "ctld-down-squeue-all.rc");
    const fs::path squeue = tmp / "squeue";
    {
      std::ofstream script(squeue);
      script << "#!/bin/sh\ncat '" << (dir / "ctld-down-squeue-all.json").string() << "'\nexit "
             << std::stoi(rc) << "\n";
    }
    chmod(squeue.c_str(), 0755);
    Client client({.squeue = squeue.string(), .timeout_seconds = 10});
    auto jobs = client.Jobs();
    EXPECT_FALSE(jobs.ok()) << "exit " << rc << ", " << (jobs ? jobs->size() : 0) << " jobs";
    if (dir.filename() == "22.05") {
      EXPECT_EQ(std::stoi(rc), 0) << "22.05 exits 0";
      ASSERT_FALSE(jobs.ok());
      EXPECT_NE(jobs.error().message.find("Failed while looking for jobs"), std::string::npos)
          << jobs.error().message;
    }
  }
  fs::remove_all(tmp);
}

TEST(SlurmVersions, TheSeriesFromTheVersionLine) {
  EXPECT_EQ(ParseSlurmSeries("slurm 25.11.7\n"), 2511);
  EXPECT_EQ(ParseSlurmSeries("slurm-wlm 22.05.8\n"), 2205);
  EXPECT_EQ(ParseSlurmSeries("slurm 23.11.0-0rc1"), 2311);
  EXPECT_EQ(ParseSlurmSeries("no version"), 0);
  EXPECT_EQ(ParseSlurmVersion("slurm 25.11.7\n"), 0x190b07u);
  EXPECT_EQ(ParseSlurmVersion("slurm 23.11"), 0x170b00u) << "no micro: 0";
  for (const fs::path& dir : Versions()) {
    const std::string series = dir.filename().string();
    EXPECT_EQ(ParseSlurmSeries(Read(dir / "version.txt")),
              std::stoi(series.substr(0, 2)) * 100 + std::stoi(series.substr(3, 2)));
  }
}

}  // namespace
}  // namespace jobmon::slurm
