#include "jobmon/common/proc_stat.h"

#include <gtest/gtest.h>

namespace jobmon {
namespace {

// Field layout of proc(5): pid (comm) state ppid pgrp session tty_nr tpgid
// flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
// num_threads itrealvalue starttime vsize rss ...
constexpr const char* kSleep =
    "4242 (sleep) S 1 4240 4240 0 -1 4194560 103 0 0 0 0 0 0 0 20 0 1 0 123456789 "
    "5623808 220 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(ParseProcStat, ReadsTheFieldsWeUse) {
  auto stat = ParseProcStat(kSleep);
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->pid, 4242);
  EXPECT_EQ(stat->comm, "sleep");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->session, 4240);
  EXPECT_EQ(stat->start_time, 123456789u);
  EXPECT_EQ(ParseProcStatStartTime(kSleep), 123456789u);
}

TEST(ParseProcStat, CommMayContainSpacesAndParentheses) {
  auto stat =
      ParseProcStat("77 (my (odd) name) ) Z 5 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 999 0 0 0\n");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->comm, "my (odd) name) ");
  EXPECT_EQ(stat->state, 'Z');
  EXPECT_EQ(stat->start_time, 999u);
}

TEST(ParseProcStat, RejectsTruncatedOrGarbage) {
  for (const char* bad :
       {"", "garbage", "12 (x) S 1 2", "x (y) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
        "12 (x) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 notanumber 0"}) {
    EXPECT_FALSE(ParseProcStat(bad)) << bad;
  }
}

}  // namespace
}  // namespace jobmon
