#include "lifecycle/slurm_version.h"

#include <gtest/gtest.h>

namespace jobmon::lifecycle {
namespace {

TEST(SlurmVersion, BuiltReleaseFromTheHeadersNumber) {
  EXPECT_EQ(ReleaseOfVersionNumber(0x160508), (SlurmRelease{22, 5}));  // 22.05.8
  EXPECT_EQ(ReleaseOfVersionNumber(0x170201), (SlurmRelease{23, 2}));
  EXPECT_EQ(FormatRelease({22, 5}), "22.05");
  EXPECT_EQ(FormatRelease({23, 11}), "23.11");
}

TEST(SlurmVersion, RunningReleaseFromSpankItems) {
  EXPECT_EQ(ParseSlurmRelease("22", "05"), (SlurmRelease{22, 5}));
  EXPECT_EQ(ParseSlurmRelease("24", "11"), (SlurmRelease{24, 11}));
  EXPECT_FALSE(ParseSlurmRelease("", "05"));
  EXPECT_FALSE(ParseSlurmRelease("22", "05-pre1"));
  EXPECT_FALSE(ParseSlurmRelease("x", "1"));
  EXPECT_FALSE(ParseSlurmRelease("-1", "1"));
}

TEST(SlurmVersion, SameMajorMinorRunsWhateverTheMicro) {
  // The micro release is not part of the comparison (0x160508 vs a 22.05.2 slurmd).
  EXPECT_FALSE(
      SlurmVersionRefusal(ReleaseOfVersionNumber(0x160508), ParseSlurmRelease("22", "05")));
}

TEST(SlurmVersion, OtherMajorOrMinorIsRefusedWithOneLineNamingBoth) {
  auto minor = SlurmVersionRefusal({22, 5}, SlurmRelease{22, 11});
  ASSERT_TRUE(minor);
  EXPECT_NE(minor->find("built for Slurm 22.05, running under 22.11: disabled"), std::string::npos)
      << *minor;
  EXPECT_NE(minor->find("rebuild the plugin"), std::string::npos);
  EXPECT_EQ(minor->find('\n'), std::string::npos);
  auto major = SlurmVersionRefusal({22, 5}, SlurmRelease{23, 5});
  ASSERT_TRUE(major);
  EXPECT_NE(major->find("running under 23.05"), std::string::npos) << *major;
}

TEST(SlurmVersion, UnreadableRunningVersionDoesNotDisable) {
  // Slurm's loader compared plugin_version already; a missing item is no
  // reason to turn diagnostics off.
  EXPECT_FALSE(SlurmVersionRefusal({22, 5}, std::nullopt));
}

}  // namespace
}  // namespace jobmon::lifecycle
