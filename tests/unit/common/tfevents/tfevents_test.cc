#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobmon/tfevents/crc32c.h"
#include "jobmon/tfevents/event.h"
#include "jobmon/tfevents/record.h"

namespace jobmon::tfevents {
namespace {

namespace fs = std::filesystem;

TEST(Crc32c, KnownVectors) {
  // RFC 3720 B.4 check value and the all-zero vector.
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Crc32c(""), 0u);
}

TEST(Record, FramesAndParsesIncrementally) {
  std::string stream = FrameRecord("alpha") + FrameRecord("") + FrameRecord(std::string(1000, 'z'));
  auto all = ParseRecords(stream);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->payloads, (std::vector<std::string>{"alpha", "", std::string(1000, 'z')}));
  EXPECT_EQ(all->consumed, stream.size());

  // A record still being written is left for the next read.
  for (size_t cut = 0; cut < stream.size(); cut += 7) {
    auto partial = ParseRecords(std::string_view(stream).substr(0, cut));
    ASSERT_TRUE(partial.ok()) << cut;
    auto rest = ParseRecords(std::string_view(stream).substr(partial->consumed));
    ASSERT_TRUE(rest.ok());
    EXPECT_EQ(partial->payloads.size() + rest->payloads.size(), 3u) << cut;
  }
}

TEST(Record, CorruptionIsDetected) {
  std::string stream = FrameRecord("payload");
  std::string bad_payload = stream;
  bad_payload[14] ^= 1;
  EXPECT_FALSE(ParseRecords(bad_payload).ok());
  std::string bad_length = stream;
  bad_length[0] ^= 1;
  EXPECT_FALSE(ParseRecords(bad_length).ok());
  EXPECT_NE(ParseRecords(bad_payload).error().message.find("payload CRC"), std::string::npos);
}

TEST(Event, EncodesAndDecodesScalars) {
  ScalarEvent event{
      42, 1700000000.25, {{"learning/loss", 2.5}, {"perf/step_time_seconds", 0.125}}, ""};
  auto decoded = DecodeEvent(EncodeEvent(event));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->step, 42);
  EXPECT_DOUBLE_EQ(decoded->wall_time, 1700000000.25);
  ASSERT_EQ(decoded->scalars.size(), 2u);
  EXPECT_EQ(decoded->scalars[0].tag, "learning/loss");
  EXPECT_FLOAT_EQ(static_cast<float>(decoded->scalars[0].value), 2.5f);
  EXPECT_FALSE(DecodeEvent("\xff\xff\xff").ok());
}

TEST(EventFileWriter, FileRoundTripsThroughTheReader) {
  fs::path dir = fs::temp_directory_path() / ("jobmon-tfevents-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path;
  {
    auto writer = EventFileWriter::Create(dir.string(), "node1", 1700000000.0);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    path = writer->path();
    for (int step = 0; step < 5; ++step) {
      ASSERT_TRUE(writer.value()
                      .Write({step, 1700000001.0 + step, {{"learning/loss", 10.0 - step}}, ""})
                      .ok());
    }
  }
  EXPECT_EQ(fs::path(path).filename(), "events.out.tfevents.1700000000.node1");
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  auto records = ParseRecords(content.str());
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->payloads.size(), 6u);
  auto version = DecodeEvent(records->payloads[0]);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->file_version, "brain.Event:2");
  for (int step = 0; step < 5; ++step) {
    auto event = DecodeEvent(records->payloads[step + 1]);
    ASSERT_TRUE(event.ok());
    EXPECT_EQ(event->step, step);
    ASSERT_EQ(event->scalars.size(), 1u);
    EXPECT_DOUBLE_EQ(event->scalars[0].value, 10.0 - step);
  }
  EXPECT_FALSE(EventFileWriter::Create(dir.string(), "node1", 1700000000.0).ok())
      << "never overwrites an existing event file";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace jobmon::tfevents
