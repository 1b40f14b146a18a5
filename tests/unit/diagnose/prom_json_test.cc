// The parsers against answers captured from Debian's /usr/bin/prometheus
// 2.42 (tests/fixtures/prometheus_api/make_fixtures.py made them).
#include "jobmon/diagnose/prom_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "jobmon/common/http_url.h"
#include "jobmon/diagnose/prom_http.h"

namespace jobmon::diagnose {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/prometheus_api/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

const Series* Find(const std::vector<Series>& all, const std::string& host,
                   const std::string& gpu) {
  for (const auto& s : all)
    if (s.Label("host") == host && s.Label("gpu") == gpu) return &s;
  return nullptr;
}

TEST(PromJson, MatrixDropsNaNAndKeepsInf) {
  auto series = ParseQueryResponse(Fixture("query_range_matrix.json"));
  ASSERT_TRUE(series) << series.error().message;
  ASSERT_EQ(series->size(), 4u);
  const Series* clean = Find(*series, "node001", "0");
  ASSERT_NE(clean, nullptr);
  EXPECT_EQ(clean->Label("__name__"), "hw_gpu_utilization_percent");
  ASSERT_EQ(clean->samples.size(), 40u);
  EXPECT_DOUBLE_EQ(clean->samples[0].time, 1700000000);
  EXPECT_DOUBLE_EQ(clean->samples[0].value, 90);
  EXPECT_DOUBLE_EQ(clean->samples[4].value, 94);
  // The made-up NaN at sample 10 is gone; the +Inf at 11 stays.
  const Series* odd = Find(*series, "node002", "1");
  ASSERT_NE(odd, nullptr);
  ASSERT_EQ(odd->samples.size(), 39u);
  EXPECT_DOUBLE_EQ(odd->samples[9].time, 1700000135);
  EXPECT_DOUBLE_EQ(odd->samples[10].time, 1700000165);
  EXPECT_TRUE(std::isinf(odd->samples[10].value) && odd->samples[10].value > 0);
  EXPECT_DOUBLE_EQ(odd->samples[11].value, 20.5);
}

TEST(PromJson, VectorHasOneSamplePerSeries) {
  auto series = ParseQueryResponse(Fixture("query_vector.json"));
  ASSERT_TRUE(series) << series.error().message;
  ASSERT_EQ(series->size(), 4u);
  for (const auto& s : *series) EXPECT_EQ(s.samples.size(), 1u);
  EXPECT_TRUE(std::isinf(Find(*series, "node002", "1")->samples[0].value));
  EXPECT_DOUBLE_EQ(Find(*series, "node001", "1")->samples[0].value, 91);
  auto empty = ParseQueryResponse(Fixture("query_vector_empty.json"));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(PromJson, ScalarIsOneUnlabelledSeries) {
  auto series = ParseQueryResponse(Fixture("query_scalar.json"));
  ASSERT_TRUE(series) << series.error().message;
  ASSERT_EQ(series->size(), 1u);
  EXPECT_TRUE((*series)[0].labels.empty());
  EXPECT_DOUBLE_EQ((*series)[0].samples.at(0).value, 39);
  EXPECT_DOUBLE_EQ((*series)[0].samples.at(0).time, 1700000585);
}

TEST(PromJson, RateMatrixHasNoName) {
  auto series = ParseQueryResponse(Fixture("query_rate_matrix.json"));
  ASSERT_TRUE(series) << series.error().message;
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].Label("__name__"), "");
  ASSERT_FALSE((*series)[0].samples.empty());
  EXPECT_NEAR((*series)[0].samples.back().value, 1.0 / 15, 1e-9);
}

TEST(PromJson, StringResultIsRefused) {
  auto series = ParseQueryResponse(Fixture("query_string.json"));
  ASSERT_FALSE(series);
  EXPECT_NE(series.error().message.find("string"), std::string::npos);
}

TEST(PromJson, ErrorAnswersCarryPrometheussMessage) {
  auto bad = ParseQueryResponse(Fixture("error_bad_query.json"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("bad_data"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("parse error"), std::string::npos) << bad.error().message;
  auto range = ParseQueryResponse(Fixture("error_bad_range.json"));
  ASSERT_FALSE(range);
  EXPECT_NE(range.error().message.find("end timestamp"), std::string::npos)
      << range.error().message;
  EXPECT_FALSE(ParseLabelValues(Fixture("error_bad_query.json")));
}

TEST(PromJson, LabelValues) {
  auto hosts = ParseLabelValues(Fixture("label_host_values.json"));
  ASSERT_TRUE(hosts) << hosts.error().message;
  EXPECT_EQ(*hosts, (std::vector<std::string>{"node001", "node002"}));
  auto names = ParseLabelValues(Fixture("label_name_values.json"));
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"hw_gpu_utilization_percent", "tb_step"}));
}

TEST(PromJson, MalformedAnswersFailWithoutThrowing) {
  for (
      std::string_view text :
      {"", "[]", "{", R"({"status":"success"})",
       R"({"status":"success","data":{"resultType":"matrix","result":[{"values":[[1]]}]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"value":[1,"x"]}]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}})",
       R"({"status":"error"})"}) {
    EXPECT_FALSE(ParseQueryResponse(text)) << text;
  }
}

// JSON objects are unordered: the parser reads the answer in one pass and
// must not depend on Prometheus's key order (VictoriaMetrics's may differ).
TEST(PromJson, KeyOrderDoesNotMatter) {
  auto series = ParseQueryResponse(
      R"({"data":{"result":[{"values":[[10,"1.5"],[20,"NaN"],[30,"+Inf"]],)"
      R"("metric":{"host":"n1","__name__":"up"}}],"resultType":"matrix"},"status":"success"})");
  ASSERT_TRUE(series) << series.error().message;
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ((*series)[0].Label("host"), "n1");
  ASSERT_EQ((*series)[0].samples.size(), 2u);  // NaN left out
  EXPECT_EQ((*series)[0].samples[0].value, 1.5);
  EXPECT_TRUE(std::isinf((*series)[0].samples[1].value));
  // Unknown keys and nested values anywhere are skipped.
  auto vector = ParseQueryResponse(
      R"({"status":"success","isPartial":false,"data":{"resultType":"vector","stats":{"a":[1,{"b":2}]},)"
      R"("result":[{"metric":{},"value":[5,"2"],"extra":[[1]]}]}})");
  ASSERT_TRUE(vector) << vector.error().message;
  ASSERT_EQ(vector->size(), 1u);
  EXPECT_EQ((*vector)[0].samples.at(0).time, 5);
  EXPECT_EQ((*vector)[0].samples.at(0).value, 2);
  // An error answer whose status comes last still reads as the error.
  auto error = ParseQueryResponse(R"({"error":"boom","errorType":"bad_data","status":"error"})");
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message, "Prometheus: bad_data: boom");
}

TEST(PromJson, BlockMeta) {
  auto meta = ParseBlockMeta(Fixture("block_meta.json"));
  ASSERT_TRUE(meta) << meta.error().message;
  EXPECT_EQ(meta->ulid.size(), 26u);
  EXPECT_EQ(meta->range.min_ms, 1700000000000);
  EXPECT_EQ(meta->range.max_ms, 1700000585001);  // exclusive: the last sample + 1 ms
  EXPECT_DOUBLE_EQ(meta->range.seconds().start, 1700000000);
  EXPECT_FALSE(ParseBlockMeta(R"({"ulid":"X","minTime":5,"maxTime":1})"));
  EXPECT_FALSE(ParseBlockMeta(R"({"minTime":5,"maxTime":10})"));
}

TEST(PromJson, TsdbHeadRange) {
  // Blocks only: the head is empty (minTime INT64_MAX, maxTime INT64_MIN).
  auto empty = ParseTsdbHeadRange(Fixture("status_tsdb_blocks.json"));
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_FALSE(*empty);
  auto head = ParseTsdbHeadRange(Fixture("status_tsdb_head.json"));
  ASSERT_TRUE(head) << head.error().message;
  ASSERT_TRUE(*head);
  EXPECT_GT((*head)->min_ms, 1600000000000);
  EXPECT_GE((*head)->max_ms, (*head)->min_ms);
}

TEST(PromJson, TsdbTimesFromPrometheussOwnMetrics) {
  auto range = ParseTsdbTimesFromMetrics(Fixture("metrics_tsdb_times.txt"));
  ASSERT_TRUE(range);
  EXPECT_EQ(range->min_ms, 1700000000000);
  EXPECT_EQ(range->max_ms, 1700000585001);
  // A new, empty TSDB: lowest INT64_MAX, head max INT64_MIN.
  EXPECT_FALSE(
      ParseTsdbTimesFromMetrics("prometheus_tsdb_lowest_timestamp 9.223372036854776e+18\n"
                                "prometheus_tsdb_head_max_time -9.223372036854776e+18\n"));
  EXPECT_FALSE(ParseTsdbTimesFromMetrics("prometheus_tsdb_lowest_timestamp 1\n"));
  EXPECT_FALSE(ParseTsdbTimesFromMetrics(""));
}

TEST(PromJson, StatusFlag) {
  auto path = ParseStatusFlag(Fixture("status_flags.json"), "storage.tsdb.path");
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(path->value_or(""), "/tmp/prom_fixtures/tsdb");
  EXPECT_FALSE(ParseStatusFlag(Fixture("status_flags.json"), "no.such.flag").value());
}

TEST(PromHttp, UrlEncodeKeepsPromQLIntact) {
  EXPECT_EQ(UrlEncode(R"(rate(x{host=~"a|b"}[5m]) + 1 & y)"),
            "rate%28x%7Bhost%3D~%22a%7Cb%22%7D%5B5m%5D%29%20%2B%201%20%26%20y");
  EXPECT_EQ(UrlEncode("a-b_c.d~"), "a-b_c.d~");
  EXPECT_EQ(UrlEncode("\xff/"), "%FF%2F");
}

}  // namespace
}  // namespace jobmon::diagnose
