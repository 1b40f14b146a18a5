// A read-only Prometheus whose `jobmon diagnose` was SIGKILLed is stopped
// at the next start, by its recorded identity, and only while it serves its
// session's dir: a live owner's session and a record that names another
// process are left alone. Real processes (python3 sleeping, its argv the
// shape of the Prometheus command line), started detached as SpawnDaemon
// starts Prometheus.
#include "access/orphan_sessions.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "jobmon/common/daemon.h"
#include "jobmon/diagnose/tsdb_access.h"

namespace jobmon::diagnose {
namespace {

namespace fs = std::filesystem;

ProcessIdentity StartServing(const std::string& data_dir) {
  DaemonSpec spec;
  spec.argv = {"/usr/bin/python3", "-c", "import time; time.sleep(120)",
               "--storage.tsdb.path=" + data_dir};
  auto id = SpawnDaemon(spec);
  EXPECT_TRUE(id.ok()) << (id ? "" : id.error().message);
  return id ? *id : ProcessIdentity{};
}

void WriteRecord(const std::string& dir, const ProcessIdentity& owner,
                 const ProcessIdentity& prometheus) {
  std::ofstream(dir + "/session") << "owner " << owner.pid << " " << owner.start_time
                                  << "\nprometheus " << prometheus.pid << " "
                                  << prometheus.start_time << "\n";
}

TEST(OrphanSessions, AnOrphansPrometheusIsStoppedOthersAreLeftAlone) {
  char tmpl[] = "/tmp/jobmon-orphans-XXXXXX";
  const std::string parent = mkdtemp(tmpl);
  const ProcessIdentity dead_owner{static_cast<pid_t>(getpid()), 1, ""};  // wrong start time
  const ProcessIdentity live_owner = ReadProcessIdentity(getpid()).value();

  const std::string orphan = parent + "/jobmon-diagnose-orphan";
  const std::string alive = parent + "/jobmon-diagnose-alive";
  const std::string planted = parent + "/jobmon-diagnose-planted";
  for (const auto& d : {orphan, alive, planted}) fs::create_directories(d + "/data");
  const ProcessIdentity orphan_prom = StartServing(orphan + "/data");
  const ProcessIdentity alive_prom = StartServing(alive + "/data");
  const ProcessIdentity elsewhere = StartServing(parent + "/somewhere-else/data");
  WriteRecord(orphan, dead_owner, orphan_prom);
  WriteRecord(alive, live_owner, alive_prom);
  WriteRecord(planted, dead_owner, elsewhere);  // names a process serving another dir

  auto done = StopOrphanedSessions(parent);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_NE(done[0].find("jobmon-diagnose-orphan"), std::string::npos) << done[0];
  EXPECT_NE(done[0].find("dir removed"), std::string::npos) << done[0];
  EXPECT_FALSE(IsSameProcessRunning(orphan_prom));
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(IsSameProcessRunning(alive_prom)) << "its owner lives";
  EXPECT_TRUE(IsSameProcessRunning(elsewhere)) << "not serving the planted dir";
  EXPECT_TRUE(fs::exists(planted));

  for (const auto& p : {alive_prom, elsewhere}) {
    EXPECT_TRUE(StopDaemon(p, std::chrono::seconds(5)).ok());
  }
  fs::remove_all(parent);
}

// A session dir belongs to whoever ran `jobmon diagnose`, and the daemon
// (root) scans them all at start: a FIFO swapped in for the record between
// the check of its type and the open (here a thread swaps one in and out as
// fast as it can) blocked the open forever. The scan must return promptly.
TEST(OrphanSessions, ARecordSwappedForAFifoDoesNotBlockTheScan) {
  char tmpl[] = "/tmp/jobmon-orphans-XXXXXX";
  const std::string parent = mkdtemp(tmpl);
  const std::string dir = parent + "/jobmon-diagnose-planted";
  fs::create_directories(dir);
  WriteRecord(parent, ReadProcessIdentity(getpid()).value(), ProcessIdentity{1, 1, ""});
  const std::string regular = parent + "/session", fifo = parent + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string record = dir + "/session", swap = dir + "/swap";
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    while (!stop) {
      for (const std::string& from : {regular, fifo}) {
        if (link(from.c_str(), swap.c_str()) == 0) (void)rename(swap.c_str(), record.c_str());
      }
    }
  });
  auto scans = std::async(std::launch::async, [&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < until) (void)StopOrphanedSessionsIn(parent);
  });
  const bool returned = scans.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "a scan blocked opening the FIFO";
  stop = true;
  swapper.join();
  while (!returned && scans.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    // Its reader is stuck in open(): a writer lets it go.
    int writer = open(record.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) close(writer);
  }
  fs::remove_all(parent);
}

}  // namespace
}  // namespace jobmon::diagnose
