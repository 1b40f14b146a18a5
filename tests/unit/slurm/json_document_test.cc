// Slurm's large answers read through simdjson (slurm/src/json_document.h):
// what is kept reads as nlohmann's own parse of the whole text, on every
// recorded version, and what simdjson refuses still reads.
#include "json_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "jobmon/slurm/jobs.h"

namespace jobmon::slurm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::set<std::string, std::less<>> kFields = {"job_id",     "name",      "job_state",
                                                    "start_time", "exit_code", "nodes"};

// nlohmann's parse of the whole text, less what ParseKept leaves out.
json Expected(const std::string& text) {
  json whole = json::parse(text);
  for (json& job : whole["jobs"]) {
    for (auto it = job.begin(); it != job.end();) {
      it = kFields.count(it.key()) ? std::next(it) : job.erase(it);
    }
  }
  return whole;
}

TEST(JsonDocumentTest, KeptFieldsReadAsNlohmannReadsThemOnEveryVersion) {
  int versions = 0;
  for (const auto& dir : fs::directory_iterator(std::string(JOBMON_FIXTURES) + "/slurm")) {
    if (!dir.is_directory() || !fs::exists(dir.path() / "squeue-all.json")) continue;
    const std::string text = Read(dir.path() / "squeue-all.json");
    json kept = ParseKept(text, {"jobs", &kFields});
    ASSERT_FALSE(kept.is_discarded()) << dir.path();
    // Same values and the same number types (unsigned, integer, float).
    EXPECT_EQ(kept.dump(), Expected(text).dump()) << dir.path();
    for (const json& job : kept["jobs"]) {
      EXPECT_EQ(job["job_id"].type(), json::value_t::number_unsigned) << dir.path();
    }
    ++versions;
  }
  EXPECT_GE(versions, 4) << "22.05, 23.11, 24.11 and 25.11 are recorded";
}

TEST(JsonDocumentTest, NumbersAreTypedAsNlohmannTypesThem) {
  const std::string text =
      R"({"jobs": [{"job_id": 7, "start_time": -1, "exit_code": 1.5, "name": 18446744073709551615}]})";
  EXPECT_EQ(ParseKept(text, {"jobs", &kFields}).dump(), Expected(text).dump());
}

// An integer past 64 bits: simdjson refuses the whole text; nlohmann reads
// it as a float. Every job is still read.
TEST(JsonDocumentTest, WhatSimdjsonRefusesStillReads) {
  const std::string text = R"({"jobs": [{"job_id": 7, "user_id": 0, "group_id": 0, "name": "a",)"
                           R"( "accrue_time": 1180591620717411303424}], "errors": []})";
  json kept = ParseKept(text, {"jobs", &kFields});
  ASSERT_FALSE(kept.is_discarded());
  EXPECT_EQ(kept["jobs"][0]["name"], "a");
  EXPECT_FALSE(kept["jobs"][0].contains("accrue_time"));
  auto answer = ParseJobsJson(text);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_EQ(answer->jobs.size(), 1u);
  EXPECT_EQ(answer->jobs[0].job_id, 7u);
}

TEST(JsonDocumentTest, NotJsonIsDiscarded) {
  EXPECT_TRUE(ParseKept("{\"jobs\": [", {"jobs", &kFields}).is_discarded());
  EXPECT_FALSE(ParseJobsJson("squeue: error: slurm_load_jobs").ok());
}

}  // namespace
}  // namespace jobmon::slurm
