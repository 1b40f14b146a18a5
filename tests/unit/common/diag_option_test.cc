#include "jobmon/common/diag_option.h"

#include <gtest/gtest.h>

namespace jobmon {
namespace {

TEST(ParseDiagOption, OnOffAndBareFlag) {
  EXPECT_EQ(*ParseDiagOption("on"), DiagMode::kOn);
  EXPECT_EQ(*ParseDiagOption("ON"), DiagMode::kOn);
  EXPECT_EQ(*ParseDiagOption("off"), DiagMode::kOff);
  EXPECT_EQ(*ParseDiagOption(""), DiagMode::kOn);
}

TEST(ParseDiagOption, AnythingElseIsRejectedWithTheValueNamed) {
  auto mode = ParseDiagOption("maybe");
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.error().message, "invalid --diag value 'maybe': expected 'on' or 'off'");
  EXPECT_FALSE(ParseDiagOption("1").ok());
  EXPECT_FALSE(ParseDiagOption("on ").ok());
}

}  // namespace
}  // namespace jobmon
