// The target file contract (common/target_file.h): what the prolog writes
// is what the daemon reads back, and a file of another shape (the job's
// user's to change) is read as far as it has the file_sd shape.
#include "jobmon/common/target_file.h"

#include <gtest/gtest.h>

namespace jobmon {
namespace {

TEST(TargetFile, ParsesFileSdGroupsAndSkipsOtherShapes) {
  auto targets = ParseFileSdTargets(
      R"([{"targets": ["10.1.0.11:9400"], "labels": {"host": "node1"}},
          {"targets": ["10.1.0.12:9400", 7]}])");
  ASSERT_TRUE(targets.ok());
  ASSERT_EQ(targets->size(), 2u);
  EXPECT_EQ((*targets)[0].host, "node1");
  EXPECT_EQ((*targets)[1].host, "10.1.0.12:9400") << "no host label: the address names it";
  EXPECT_FALSE(ParseFileSdTargets("{}").ok());
  EXPECT_FALSE(ParseFileSdTargets("[{\"targets\": [").ok()) << "truncated";
  auto odd = ParseFileSdTargets(R"([7, {"labels": {"host": "n"}}, {"targets": "10.1.0.13:9400"},
                                    {"targets": ["10.1.0.14:9400"], "labels": {"host": 3}}])");
  ASSERT_TRUE(odd.ok());
  ASSERT_EQ(odd->size(), 1u) << "only a targets array counts";
  EXPECT_EQ((*odd)[0].host, "10.1.0.14:9400") << "a host label that is not a string is none";
}

TEST(TargetFile, WhatThePrologWritesTheDaemonReads) {
  for (const auto& [address, node] :
       {std::pair<std::string, std::string>{"10.201.0.12:9400", "node2"},
        {"[fd00::12]:9400", "gpu-a100-017"}}) {
    auto targets = ParseFileSdTargets(RenderTargetFile(address, node));
    ASSERT_TRUE(targets.ok());
    ASSERT_EQ(targets->size(), 1u);
    EXPECT_EQ((*targets)[0].address, address);
    EXPECT_EQ((*targets)[0].host, node);
  }
}

}  // namespace
}  // namespace jobmon
