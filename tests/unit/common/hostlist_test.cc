#include "jobmon/common/hostlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace jobmon {
namespace {

using Hosts = std::vector<std::string>;

Hosts Expand(const std::string& expression) {
  auto hosts = ExpandHostlist(expression);
  EXPECT_TRUE(hosts.ok()) << expression << ": " << (hosts.ok() ? "" : hosts.error().message);
  return hosts.ok() ? hosts.value() : Hosts{};
}

TEST(ExpandHostlist, RangesListsAndSeveralGroups) {
  EXPECT_EQ(Expand("node[01-04,7],gpu-a[1-2]"),
            (Hosts{"node01", "node02", "node03", "node04", "node7", "gpu-a1", "gpu-a2"}));
}

TEST(ExpandHostlist, ZeroPaddingFollowsTheLowerBound) {
  EXPECT_EQ(Expand("node[08-11]"), (Hosts{"node08", "node09", "node10", "node11"}));
  EXPECT_EQ(Expand("node[8-11]"), (Hosts{"node8", "node9", "node10", "node11"}));
  EXPECT_EQ(Expand("n[001-002]"), (Hosts{"n001", "n002"}));
}

TEST(ExpandHostlist, PlainNamesAndSuffixes) {
  EXPECT_EQ(Expand("login"), (Hosts{"login"}));
  EXPECT_EQ(Expand("a,b,c"), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(Expand("node1-ib,node2-ib"), (Hosts{"node1-ib", "node2-ib"}));
}

TEST(ExpandHostlist, SeveralBracketsExpandAsACartesianProduct) {
  EXPECT_EQ(Expand("rack[1-2]-n[1-2]"), (Hosts{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}));
}

TEST(ExpandHostlist, MalformedInputIsAnErrorNamingTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty hostlist"},
      {"node[1-", "unclosed"},
      {"node1]", "unbalanced"},
      {"node[[1]]", "nested"},
      {"node[]", "empty brackets"},
      {"node[3-1]", "reversed range '3-1'"},
      {"node[a-b]", "bad range bound 'a'"},
      {"node[1,,2]", "empty range"},
      {"a,,b", "empty host name"},
      {"node[1-]", "bad range bound ''"},
      {"node 1", "whitespace"},
      {"node[1-2]-ib", "text after the last ']'"},
      {"node[1-2000000]", "more than 1000000 hosts"},
      {"a[1-1000]b[1-1001]", "more than 1000000 hosts"},
      {"n[1-99999999999999999999]", "bad range bound"},
  };
  for (const auto& [input, expected] : cases) {
    auto hosts = ExpandHostlist(input);
    ASSERT_FALSE(hosts.ok()) << input;
    EXPECT_NE(hosts.error().message.find(expected), std::string::npos)
        << input << " -> " << hosts.error().message;
  }
}

TEST(CompressHostlist, MergesConsecutiveNumbersPerPrefix) {
  EXPECT_EQ(CompressHostlist({"node01", "node02", "node03", "node04", "node7", "gpu-a1", "gpu-a2"}),
            "node[01-04,7],gpu-a[1-2]");
}

TEST(CompressHostlist, SortsDropsDuplicatesAndKeepsSinglesPlain) {
  EXPECT_EQ(CompressHostlist({"node3", "node1", "node2", "node1"}), "node[1-3]");
  EXPECT_EQ(CompressHostlist({"node5"}), "node5");
  EXPECT_EQ(CompressHostlist({"login", "node1", "node2"}), "login,node[1-2]");
  EXPECT_EQ(CompressHostlist({}), "");
}

TEST(CompressHostlist, PaddingDecidesWhatMerges) {
  EXPECT_EQ(CompressHostlist({"node9", "node10"}), "node[9-10]");
  EXPECT_EQ(CompressHostlist({"node09", "node10"}), "node[09-10]");
  EXPECT_EQ(CompressHostlist({"node1", "node01"}), "node[01,1]");
  EXPECT_EQ(CompressHostlist({"n010", "n11"}), "n[010,11]");
}

TEST(CompressHostlist, RoundTripsThroughExpansion) {
  for (const char* expression : {"node[01-04,7],gpu-a[1-2]", "node[8-11]", "n[001-100]",
                                 "a1,b2,c[3-4]", "node[1,3,5-9]", "x[98-101]", "rack1-n[1-4]"}) {
    Hosts hosts = Expand(expression);
    Hosts round_trip = Expand(CompressHostlist(hosts));
    std::multiset<std::string> a(hosts.begin(), hosts.end()),
        b(round_trip.begin(), round_trip.end());
    EXPECT_EQ(a, b) << expression << " -> " << CompressHostlist(hosts);
  }
}

}  // namespace
}  // namespace jobmon
