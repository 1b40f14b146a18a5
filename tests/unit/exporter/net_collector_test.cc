// The parsers behind the net and tcp collectors (/proc/net/dev,
// /proc/net/snmp), with the one of /proc/pressure.
#include <gtest/gtest.h>

#include <string>

#include "collector_test_support.h"
#include "jobmon/exporter/collector.h"
#include "jobmon/exporter/proc_parsers.h"

namespace jobmon::exporter {
namespace {

using test_support::kFixture;

TEST(ProcParsers, PressureNetDevSnmp) {
  auto psi = ParsePressure(ReadSmallFile(kFixture + "/pressure/io").value());
  ASSERT_TRUE(psi.ok());
  EXPECT_DOUBLE_EQ(psi->some->avg10, 1.25);
  EXPECT_EQ(psi->full->total_us, 23732638u);
  EXPECT_FALSE(ParsePressure("some avg10=x avg60=0 avg300=0 total=0\n").ok());
  auto dev = ParseNetDev(ReadSmallFile(kFixture + "/net/dev").value());
  ASSERT_TRUE(dev.ok());
  ASSERT_EQ(dev->size(), 2u);
  EXPECT_EQ((*dev)[1].name, "eth0");
  EXPECT_EQ((*dev)[1].rx_drop, 7u);
  EXPECT_EQ((*dev)[1].tx_errors, 1u);
  auto snmp = ParseSnmpTables(ReadSmallFile(kFixture + "/net/snmp").value());
  ASSERT_TRUE(snmp.ok());
  EXPECT_EQ(snmp->at("Tcp:RetransSegs"), 1234);
  EXPECT_EQ(snmp->at("Tcp:MaxConn"), -1);
  EXPECT_FALSE(ParseSnmpTables("Tcp: A B\nUdp: 1 2\n").ok());
}

}  // namespace
}  // namespace jobmon::exporter
