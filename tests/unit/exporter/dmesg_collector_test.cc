// The dmesg collector: /dev/kmsg records parsed and classified (NVIDIA Xid,
// amdgpu faults), counted from the exporter's start, and the kernel log
// taken from an inherited descriptor (kmsg_source.h) or <dev>/kmsg.
#include "jobmon/exporter/dmesg_collector.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collector_test_support.h"
#include "jobmon/exporter/kmsg_source.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::kFixtures;
using test_support::ReadFixture;
using test_support::TempDir;
using test_support::Text;

TEST(Dmesg, ParsesRecordsContinuationLinesAndLeavesAPartialOne) {
  std::string text =
      "3,7,100,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:3b:00.0\n"
      "12,8,200,c;user message; with a semicolon\n"
      "6,9,300,-;partial";
  size_t consumed = 0;
  auto records = ParseKmsgRecords(text, &consumed);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].level, 3);
  EXPECT_EQ(records[0].sequence, 7u);
  EXPECT_EQ(records[0].message.rfind("NVRM: Xid", 0), 0u);
  EXPECT_EQ(records[1].level, 4) << "prio 12 = facility user(1) << 3 | warning(4)";
  EXPECT_EQ(records[1].message, "user message; with a semicolon");
  EXPECT_EQ(text.substr(consumed), "6,9,300,-;partial");
  // Garbage never crashes and yields no record.
  auto none = ParseKmsgRecords("no header here\n;;;\n,,,\n", &consumed);
  EXPECT_TRUE(none.empty());
}

TEST(Dmesg, ClassifiesNvidiaXidAndAmdgpuFaultsButNotNoiseOrStackFrames) {
  size_t consumed = 0;
  auto records = ParseKmsgRecords(ReadFixture("kmsg/gpu_errors.kmsg"), &consumed);
  ASSERT_EQ(records.size(), 17u);
  std::vector<uint64_t> errors;
  std::map<int, int> xids;
  for (const auto& record : records) {
    auto verdict = ClassifyKernelMessage(record);
    if (verdict.is_gpu_error) errors.push_back(record.sequence);
    if (verdict.xid) ++xids[*verdict.xid];
  }
  EXPECT_EQ(errors, (std::vector<uint64_t>{2002, 2003, 2004, 2005, 2007, 2008, 2009, 2010}));
  EXPECT_EQ(xids, (std::map<int, int>{{13, 1}, {48, 2}, {79, 1}}));
}

TEST(Dmesg, CountsOnlyRecordsAfterStartAndWaitsForAPartialRecord) {
  TempDir dev("dev");
  fs::copy_file(kFixtures + "/dev/kmsg", dev.path / "kmsg");
  DmesgCollector collector(dev.path.string());
  auto first = collector.Collect();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_NE(Text(*first).find("hw_dmesg_gpu_errors_total 0"), std::string::npos)
      << "the Xid 79 in the file predates the exporter: " << Text(*first);
  EXPECT_EQ(Text(*first).find("hw_gpu_xid_errors_total"), std::string::npos);

  std::string errors = ReadFixture("kmsg/gpu_errors.kmsg");
  size_t cut = errors.find("3,2007");  // the first amdgpu record, split in the middle
  {
    std::ofstream out(dev.path / "kmsg", std::ios::app | std::ios::binary);
    out << errors.substr(0, cut + 20);
  }
  std::string second = Text(collector.Collect().value());
  EXPECT_NE(second.find("hw_dmesg_gpu_errors_total 4"), std::string::npos) << second;
  EXPECT_NE(second.find("hw_gpu_xid_errors_total{xid=\"48\"} 2"), std::string::npos);
  {
    std::ofstream out(dev.path / "kmsg", std::ios::app | std::ios::binary);
    out << errors.substr(cut + 20);
  }
  std::string third = Text(collector.Collect().value());
  EXPECT_NE(third.find("hw_dmesg_gpu_errors_total 8"), std::string::npos) << third;
  EXPECT_NE(third.find("hw_gpu_xid_errors_total{xid=\"13\"} 1"), std::string::npos);
  EXPECT_NE(third.find("hw_gpu_xid_errors_total{xid=\"79\"} 1"), std::string::npos);
  EXPECT_NE(third.find("hw_dmesg_lost_records_total 0"), std::string::npos);
}

TEST(Dmesg, MissingKmsgIsAnErrorNotACrash) {
  DmesgCollector collector("/nonexistent");
  auto result = collector.Collect();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("/nonexistent/kmsg"), std::string::npos);
}

TEST(Dmesg, TheRealKmsgIsReadWithoutBlocking) {
  int probe = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
  if (probe < 0) GTEST_SKIP() << "/dev/kmsg not readable here";
  close(probe);
  DmesgCollector collector("/dev");
  auto start = std::chrono::steady_clock::now();
  auto result = collector.Collect();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // dmesg_restrict can refuse the read itself; then the error says so.
  if (!result.ok()) {
    EXPECT_NE(result.error().message.find("/dev/kmsg"), std::string::npos);
  } else {
    EXPECT_NE(Text(*result).find("hw_dmesg_gpu_errors_total"), std::string::npos);
  }
}

// The prolog's /dev/kmsg reaches the exporter as an inherited descriptor
// (--kmsg-fd): here a pipe stands in for it. The record is built from
// NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c
// (XID_PRINT_WITH_ATTR, "NVRM: Xid (" attr "): %d, pid=%s, name=%s, %s")
// in /dev/kmsg's "<prio>,<seq>,<usec>,<flags>;<message>" framing.
TEST(KmsgSource, AnInheritedPipeIsAdoptedAndItsXidLinesCounted) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // inheritable, blocking: as a descriptor arrives
  std::vector<std::string> notes;
  KmsgSource source = OpenKmsgSource(fds[0], "/nonexistent", &notes);
  EXPECT_TRUE(notes.empty());
  ASSERT_EQ(source.kind, KmsgSource::Kind::kInheritedFd) << source.where;
  EXPECT_EQ(source.fd.get(), fds[0]);
  EXPECT_EQ(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "nothing the exporter runs gets it";
  EXPECT_NE(fcntl(fds[0], F_GETFL) & O_NONBLOCK, 0) << "a scrape never waits on it";
  EXPECT_NE(source.where.find("fd " + std::to_string(fds[0]) + " (pipe:"), std::string::npos)
      << source.where;
  EXPECT_NE(Text(KmsgSourceFamilies(source)).find("hw_dmesg_source{source=\"inherited_fd\"} 1"),
            std::string::npos);

  DmesgCollector collector(source);
  auto empty = collector.Collect();
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_NE(Text(*empty).find("hw_dmesg_gpu_errors_total 0"), std::string::npos);
  std::string record =
      "3,9001,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen "
      "off the bus.\n";
  ASSERT_EQ(write(fds[1], record.data(), record.size()), static_cast<ssize_t>(record.size()));
  std::string text = Text(collector.Collect().value());
  EXPECT_NE(text.find("hw_dmesg_gpu_errors_total 1"), std::string::npos) << text;
  EXPECT_NE(text.find("hw_gpu_xid_errors_total{xid=\"79\"} 1"), std::string::npos) << text;

  // A collector rebuilt after a stuck one reads on from the same place.
  DmesgCollector rebuilt(source);
  ASSERT_EQ(write(fds[1], record.data(), record.size()), static_cast<ssize_t>(record.size()));
  EXPECT_NE(Text(rebuilt.Collect().value()).find("hw_dmesg_gpu_errors_total 1"), std::string::npos);
  EXPECT_NE(Text(collector.Collect().value()).find("hw_dmesg_gpu_errors_total 1"),
            std::string::npos)
      << "the record went to the rebuilt collector, not to both";
  close(fds[1]);
}

TEST(KmsgSource, AnUnusableDescriptorFallsBackAndNoneSaysWhy) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<std::string> notes;
  // A write end is no kernel log; the fallback then fails too.
  KmsgSource source = OpenKmsgSource(fds[1], "/nonexistent", &notes);
  EXPECT_EQ(source.kind, KmsgSource::Kind::kNone);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("not open for reading"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("/nonexistent/kmsg"), std::string::npos) << notes[1];
  std::string text = Text(KmsgSourceFamilies(source));
  EXPECT_NE(text.find("source=\"none\""), std::string::npos) << text;
  EXPECT_NE(text.find("error=\"/nonexistent/kmsg: No such file or directory\""), std::string::npos)
      << text;
  DmesgCollector collector(source);
  auto result = collector.Collect();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("/nonexistent/kmsg"), std::string::npos);
  close(fds[0]);
  close(fds[1]);

  // Closed, or one of stdin/stdout/stderr: refused, and <dev>/kmsg is used.
  TempDir dev("dev");
  fs::copy_file(kFixtures + "/dev/kmsg", dev.path / "kmsg");
  for (int bad : {fds[0], 1}) {
    notes.clear();
    KmsgSource fallback = OpenKmsgSource(bad, dev.path.string(), &notes);
    EXPECT_EQ(fallback.kind, KmsgSource::Kind::kDevice) << bad;
    EXPECT_EQ(notes.size(), 1u) << bad;
  }
  EXPECT_NE(fcntl(1, F_GETFD), -1) << "stdout left alone";
}

}  // namespace
}  // namespace jobmon::exporter
