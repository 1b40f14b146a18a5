// A read-only Prometheus whose `jobmon diagnose` was SIGKILLed is stopped
// at the next start, by its recorded identity, and only while it serves its
// session's dir: a live owner's session and a record that names another
// process are left alone. Real processes (python3 sleeping, its argv the
// shape of the Prometheus command line), started detached as SpawnDaemon
// starts Prometheus.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

}  // namespace
}  // namespace jobmon::diagnose
