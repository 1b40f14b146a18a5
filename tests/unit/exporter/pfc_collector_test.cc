// The pfc collector: pause counters found in the drivers' ethtool
// statistics, labelled per interface, the ethtool ioctl itself, and the
// interfaces listed under the procfs root.
#include "jobmon/exporter/pfc_collector.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "collector_test_support.h"

namespace jobmon::exporter {
namespace {

using test_support::kFixtures;
using test_support::ReadFixture;
using test_support::Text;

EthtoolStats ParseEthtoolDashS(const std::string& text) {
  EthtoolStats stats;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto colon = line.rfind(": ");
    auto start = line.find_first_not_of(' ');
    if (colon == std::string::npos || line.rfind("NIC statistics", 0) == 0) continue;
    stats.names.push_back(line.substr(start, colon - start));
    stats.values.push_back(std::stoull(line.substr(colon + 2)));
  }
  return stats;
}

std::string Describe(const std::vector<PauseCounter>& counters) {
  std::string out;
  for (const auto& c : counters) {
    out += c.direction + "/" + c.priority + "=" + std::to_string(c.frames) + " ";
  }
  return out;
}

TEST(Pfc, FindsPauseCountersInMlx5AndBnxtStatistics) {
  EXPECT_EQ(Describe(FindPauseCounters(ParseEthtoolDashS(ReadFixture("ethtool/mlx5.txt")))),
            "rx/link=5120 tx/link=77 rx/0=0 tx/0=0 rx/3=5120 tx/3=77 ");
  EXPECT_EQ(Describe(FindPauseCounters(ParseEthtoolDashS(ReadFixture("ethtool/bnxt.txt")))),
            "rx/link=12 tx/link=3 rx/0=0 rx/3=940 tx/0=0 tx/3=31 ");
  EthtoolStats mismatched{{"rx_pause", "tx_pause"}, {5}};
  EXPECT_EQ(Describe(FindPauseCounters(mismatched)), "rx/link=5 ");
}

TEST(Pfc, CollectorLabelsPerInterfaceAndSkipsOnesThatVanish) {
  PfcCollector collector(
      [] {
        return std::vector<std::string>{"ens1f0np0", "gone", "eth0"};
      },
      [](const std::string& name) -> Expected<EthtoolStats> {
        if (name == "gone") return Error{"gone: No such device"};
        if (name == "eth0") return EthtoolStats{{"rx_kicks"}, {9}};
        return ParseEthtoolDashS(ReadFixture("ethtool/mlx5.txt"));
      });
  std::string text = Text(collector.Collect().value());
  EXPECT_NE(text.find("hw_net_pfc_pause_frames_total{device=\"ens1f0np0\",direction=\"rx\","
                      "priority=\"3\"} 5120"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("eth0"), std::string::npos);
  EXPECT_EQ(text.find("gone"), std::string::npos);
}

// The ioctl itself, on a veth pair in a network namespace of our own (a
// child process; the namespace and its links vanish with it).
TEST(Pfc, EthtoolIoctlReadsARealDriversStatistics) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace";
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(report[0]);
    std::string out;
    if (unshare(CLONE_NEWNET) != 0) {
      out = "skip: unshare";
    } else if (std::system("ip link add jmpfc0 type veth peer name jmpfc1 2>/dev/null") != 0) {
      out = "skip: no veth";
    } else {
      auto veth = ReadEthtoolStats("jmpfc0");
      auto lo = ReadEthtoolStats("lo");
      auto missing = ReadEthtoolStats("jmnosuch0");
      // /proc/net is the reading process's namespace: the new one here.
      auto listed = InterfacesIn("/proc");
      auto names = listed ? *listed : std::vector<std::string>{};
      out = std::string(veth.ok() ? "veth ok " : "veth error ") +
            (veth.ok() && !veth->names.empty() ? veth->names.front() : "") + " | lo " +
            (lo.ok() ? std::to_string(lo->names.size()) : "error") + " | missing " +
            (missing.ok() ? "ok" : "error") + " | interfaces";
      for (const auto& n : names) out += " " + n;
    }
    (void)!write(report[1], out.data(), out.size());
    _exit(0);
  }
  close(report[1]);
  std::string result;
  char buffer[512];
  for (ssize_t n; (n = read(report[0], buffer, sizeof buffer)) > 0;) result.append(buffer, n);
  close(report[0]);
  waitpid(pid, nullptr, 0);
  if (result.rfind("skip", 0) == 0) GTEST_SKIP() << result;
  EXPECT_EQ(result, "veth ok peer_ifindex | lo 0 | missing error | interfaces jmpfc0 jmpfc1");
}

TEST(Pfc, InterfacesComeFromTheProcfsRoot) {
  auto names = InterfacesIn(kFixtures + "/procfs/basic");
  ASSERT_TRUE(names.ok()) << names.error().message;
  EXPECT_EQ(*names, std::vector<std::string>{"eth0"}) << "lo left out";
  EXPECT_FALSE(InterfacesIn("/nonexistent").ok());
}

TEST(Pfc, AFixtureRootNeverReadsThisMachinesNics) {
  // eth0 of the fixture is not this machine's eth0: the ioctl would answer
  // for the latter.
  SourcePaths paths;
  paths.procfs = kFixtures + "/procfs/basic";
  paths.sysfs = "/nonexistent";
  auto pfc = SelectCollectors(BuiltinCollectors(paths), "pfc").value();
  ASSERT_EQ(pfc.size(), 1u);
  auto collector = pfc[0].make();
  auto families = collector->Collect();
  ASSERT_TRUE(families.ok());
  EXPECT_TRUE(families->empty()) << Text(*families);
  EXPECT_TRUE(IsLiveRoot("/proc", "/proc"));
  EXPECT_TRUE(IsLiveRoot("/proc/", "/proc"));
  EXPECT_FALSE(IsLiveRoot(kFixtures + "/procfs/basic", "/proc"));
}

}  // namespace
}  // namespace jobmon::exporter
