// Unix seconds as ISO 8601 UTC (common/include/jobmon/common/iso_time.h),
// and what is written for a time no four-digit year holds.
#include "jobmon/common/iso_time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace jobmon {
namespace {

TEST(IsoTime, WritesUnixSecondsAsUtc) {
  EXPECT_EQ(FormatIsoUtc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatIsoUtc(1795960749.9), "2026-11-29T13:59:09Z");
  EXPECT_EQ(FormatIsoUtc(253402300799.0), "9999-12-31T23:59:59Z");
  EXPECT_EQ(FormatIsoUtc(-62167219200.0), "0000-01-01T00:00:00Z");
}

TEST(IsoTime, ATimePastFourDigitYearsIsSaidToBe) {
  for (double t : {253402300800.0, -62167219201.0, 7.77778e35, -1e300,
                   std::numeric_limits<double>::infinity(), std::nan("")}) {
    EXPECT_EQ(FormatIsoUtc(t), kTimeOutOfRange) << t;
  }
}

}  // namespace
}  // namespace jobmon
