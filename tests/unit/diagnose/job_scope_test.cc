// Confining queries to one job in a central store (job_scope.h,
// central_store.h): the rewriting of every selector form the playbooks
// use, and a whole diagnosis whose every query carries the job's matchers.

#include "access/job_scope.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>

#include "canned_prom_source.h"
#include "compare/compare.h"
#include "diagnose.h"
#include "diagnose_series.h"
#include "jobmon/diagnose/central_store.h"
#include "jobmon/diagnose/playbooks.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Grid;

constexpr const char* kJob = R"(slurm_job_id="7")";

std::string Scoped(std::string_view promql) {
  auto out = ScopeSelectors(promql, kJob);
  EXPECT_TRUE(out.ok()) << promql;
  return out.ok() ? *out : std::string();
}

TEST(JobScope, MatchersQuoteTheirValues) {
  EXPECT_EQ(JobMatchers("1234", ""), R"(slurm_job_id="1234")");
  EXPECT_EQ(JobMatchers("1234", R"(a"b\c)"), R"(slurm_job_id="1234",cluster="a\"b\\c")");
}

TEST(JobScope, BareNamesAndNamesWithMatchers) {
  EXPECT_EQ(Scoped("up"), R"(up{slurm_job_id="7"})");
  EXPECT_EQ(Scoped("hw_gpu_power_watts:avg"), R"(hw_gpu_power_watts:avg{slurm_job_id="7"})");
  EXPECT_EQ(Scoped(R"(hw_gpu_power_watts{host="n1",gpu=~"0|1"})"),
            R"(hw_gpu_power_watts{host="n1",gpu=~"0|1",slurm_job_id="7"})");
  EXPECT_EQ(Scoped("x{}"), R"(x{slurm_job_id="7"})");
  EXPECT_EQ(Scoped(R"(x {a="b",})"), R"(x {a="b",slurm_job_id="7"})") << "a trailing comma";
  // A matcher the caller wrote cannot widen the scope: both must hold.
  EXPECT_EQ(Scoped(R"(x{slurm_job_id=~".*"})"), R"(x{slurm_job_id=~".*",slurm_job_id="7"})");
}

TEST(JobScope, RegexNamesAndBraceOnlySelectors) {
  EXPECT_EQ(Scoped(R"({__name__=~"hw_gpu_.*"})"), R"({__name__=~"hw_gpu_.*",slurm_job_id="7"})");
  EXPECT_EQ(Scoped(R"(count by (__name__) ({__name__=~"tb_.+", host="n}1"}))"),
            R"(count by (__name__) ({__name__=~"tb_.+", host="n}1",slurm_job_id="7"}))")
      << "a brace inside a string ends nothing";
}

TEST(JobScope, InsideFunctionsRangesAndSubqueries) {
  EXPECT_EQ(Scoped("rate(hw_tcp_retransmits_total[60s])"),
            R"(rate(hw_tcp_retransmits_total{slurm_job_id="7"}[60s]))");
  EXPECT_EQ(Scoped(R"(increase(hw_gpu_ecc_errors_total{type="uncorrectable"}[91s]))"),
            R"(increase(hw_gpu_ecc_errors_total{type="uncorrectable",slurm_job_id="7"}[91s]))");
  EXPECT_EQ(Scoped("max_over_time(rate(x[1m])[5m:30s])"),
            R"(max_over_time(rate(x{slurm_job_id="7"}[1m])[5m:30s]))");
  EXPECT_EQ(Scoped("timestamp(up)"), R"(timestamp(up{slurm_job_id="7"}))");
  EXPECT_EQ(Scoped("x offset 5m"), R"(x{slurm_job_id="7"} offset 5m)");
  EXPECT_EQ(Scoped(R"(label_replace(up, "h", "$1", "instance", "(.*):\\d+"))"),
            R"(label_replace(up{slurm_job_id="7"}, "h", "$1", "instance", "(.*):\\d+"))");
}

TEST(JobScope, AggregationsAndBinaryExpressions) {
  EXPECT_EQ(Scoped("max by (host) (hw_collector_success)"),
            R"(max by (host) (hw_collector_success{slurm_job_id="7"}))");
  EXPECT_EQ(Scoped("sum(rate(a[5m])) without (gpu, device)"),
            R"(sum(rate(a{slurm_job_id="7"}[5m])) without (gpu, device))");
  EXPECT_EQ(
      Scoped("topk(3, x) and on(host) group_left(gpu) y > bool 1e-3"),
      R"(topk(3, x{slurm_job_id="7"}) and on(host) group_left(gpu) y{slurm_job_id="7"} > bool 1e-3)");
  EXPECT_EQ(
      Scoped(R"(count_values("v", x) / ignoring (le) count(y) * -0x1F + .5 unless z)"),
      R"(count_values("v", x{slurm_job_id="7"}) / ignoring (le) count(y{slurm_job_id="7"}) * -0x1F + .5 unless z{slurm_job_id="7"})");
  EXPECT_EQ(Scoped("MAX BY (host) (x) OR Inf"), R"(MAX BY (host) (x{slurm_job_id="7"}) OR Inf)")
      << "keywords are case-insensitive";
  // A metric named like an aggregation is still a metric when nothing
  // makes it one.
  EXPECT_EQ(Scoped("count"), R"(count{slurm_job_id="7"})");
}

TEST(JobScope, AnUnterminatedQueryIsNotSent) {
  for (const char* bad : {R"(x{host="n1)", "x{host=\"n1\"", "rate(x[5m)", "max by (host x"}) {
    EXPECT_FALSE(ScopeSelectors(bad, kJob).ok()) << bad;
  }
  CannedPromSource inner;
  JobScopedSource scoped(inner, kJob, "store");
  EXPECT_FALSE(scoped.QueryInstant("x{", 1).ok());
  EXPECT_TRUE(inner.asked().empty()) << "nothing unconfined reaches the store";
}

TEST(JobScope, LabelValuesAreAskedWithTheJobsMatch) {
  CannedPromSource inner;
  inner.Labels("host", {"n1"});
  JobScopedSource scoped(inner, kJob, "central store x");
  ASSERT_TRUE(scoped.LabelValues("host").ok());
  ASSERT_TRUE(scoped.LabelValues("gpu", std::nullopt, "hw_gpu_power_watts").ok());
  EXPECT_EQ(inner.label_matches(),
            (std::vector<std::string>{R"({slurm_job_id="7"})",
                                      R"(hw_gpu_power_watts{slurm_job_id="7"})"}));
  EXPECT_EQ(scoped.Describe(), "central store x");
}

// Every metric name in `query` (hw_*, tb_*, up) is followed by braces
// holding `matchers`: an independent check of what reached the store.
bool EveryNameConfined(const std::string& query, const std::string& matchers) {
  auto ident = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  };
  for (size_t i = 0; i < query.size(); ++i) {
    if (!ident(query[i]) || (i > 0 && (ident(query[i - 1]) || query[i - 1] == '"'))) continue;
    size_t end = i;
    while (end < query.size() && ident(query[end])) ++end;
    const std::string word = query.substr(i, end - i);
    if (word != "up" && !word.starts_with("hw_") && !word.starts_with("tb_")) continue;
    if (end >= query.size() || query[end] != '{') return false;
    size_t close = query.find('}', end);
    if (close == std::string::npos ||
        query.substr(end, close - end).find(matchers) == std::string::npos)
      return false;
    i = close;
  }
  return true;
}

TEST(JobScope, AWholeDiagnosisAsksOnlyTheJobsSeries) {
  const std::string matchers = JobMatchers("4242", "c1");
  CannedPromSource inner;
  inner.Labels("__name__", {"hw_gpu_power_watts", "hw_gpu_utilization_percent", "tb_step", "up"});
  inner.Labels("host", {"n1", "n2"});
  inner.Answer("timestamp(up{",
               {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double t) { return t; }),
                Grid({{"host", "n2"}}, 1000, 1600, 5, [](double t) { return t; })});
  inner.Answer("tb_step{",
               {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double t) { return (t - 1000) / 10; })});
  inner.Answer("up{", {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double) { return 1; }),
                       Grid({{"host", "n2"}}, 1000, 1600, 5, [](double) { return 1; })});
  inner.Answer("hw_gpu_power_watts{",
               {Grid({{"host", "n1"}, {"gpu", "0"}}, 1000, 1600, 5, [](double) { return 300; })});
  JobScopedSource scoped(inner, matchers, "central store");
  DiagnoseInputs in;
  in.job = "4242";
  in.tsdb_range = {900, 1700};
  for (const PlaybookSpec& spec : Playbooks()) in.playbooks.emplace_back(spec.name);
  Diagnosis d = Diagnose(scoped, in);
  ASSERT_EQ(d.playbooks.size(), Playbooks().size());
  EXPECT_EQ(d.context.hosts.size(), 2u) << "the canned answers reached the playbooks";
  Compare(scoped, d.context, scoped, d.context, "", "");
  ASSERT_GT(inner.asked().size(), 30u);
  for (const std::string& query : inner.asked())
    EXPECT_TRUE(EveryNameConfined(query, matchers)) << query;
  ASSERT_FALSE(inner.label_matches().empty());
  for (const std::string& match : inner.label_matches())
    EXPECT_NE(match.find(matchers), std::string::npos) << match;
}

TEST(CentralStore, TheJobsRangeFromItsUpCounts) {
  // Points every 100 s counting the previous 100 s; data from 1250 to 1580.
  std::vector<Series> counts = {
      Grid({{"host", "n1"}}, 1000, 2000, 100, [](double t) { return t >= 1300 && t <= 1600; }),
      Grid({{"host", "n2"}}, 1000, 2000, 100, [](double t) { return t == 1400 ? 3 : 0; })};
  auto range = BoundsFromCounts(counts, 100);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->start, 1200);
  EXPECT_EQ(range->end, 1600);
  EXPECT_FALSE(BoundsFromCounts({Grid({}, 0, 100, 10, [](double) { return 0; })}, 10));

  // Two passes narrow a month to the job's own minutes.
  CannedPromSource inner;
  const double start = 1'700'000'000, end = start + 600;
  inner.Answer("count_over_time(up{",
               {Grid({{"host", "n1"}}, start - 40 * 86400, start + 40 * 86400, 1,
                     [&](double t) { return t >= start && t <= end ? 1 : 0; })});
  JobScopedSource scoped(inner, kJob, "store");
  auto found = FindJobRange(scoped, {start - 31 * 86400, start + 86400});
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(*found);
  EXPECT_LE((*found)->start, start);
  EXPECT_GE((*found)->end, end);
  EXPECT_LT((*found)->seconds(), 600 + 2 * 10) << "within a few seconds' worth of steps";
  for (const std::string& query : inner.asked())
    EXPECT_NE(query.find(kJob), std::string::npos) << query;
}

TEST(CentralStore, TheTokenFileMustBeTheOwnersAlone) {
  char path[] = "/tmp/jobmon-token-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "  s3cret \nsecond line\n", 22), 22);
  close(fd);
  ASSERT_EQ(chmod(path, 0600), 0);
  auto token = ReadBearerTokenFile(path);
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(*token, "s3cret");
  ASSERT_EQ(chmod(path, 0640), 0);
  auto refused = ReadBearerTokenFile(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("0640"), std::string::npos) << refused.error().message;
  EXPECT_EQ(refused.error().message.find("s3cret"), std::string::npos);
  unlink(path);
  EXPECT_FALSE(ReadBearerTokenFile(path).ok());
}

}  // namespace
}  // namespace jobmon::diagnose
