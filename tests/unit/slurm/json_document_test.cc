// Slurm's large answers read through simdjson (slurm/src/json_document.h):
// what is kept reads as nlohmann's own parse of the whole text, on every
// recorded version, and what simdjson refuses still reads. A JobsReader's
// successive answers read as each alone does, whatever changed between them.
#include "json_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
    std::string text = Read(dir.path() / "squeue-all.json");
    const std::string as_read = text;
    json kept = ParseKept(text, {"jobs", &kFields});
    ASSERT_FALSE(kept.is_discarded()) << dir.path();
    EXPECT_EQ(text, as_read) << "read in place, and left as it was";
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
  std::string text =
      R"({"jobs": [{"job_id": 7, "start_time": -1, "exit_code": 1.5, "name": 18446744073709551615}]})";
  EXPECT_EQ(ParseKept(text, {"jobs", &kFields}).dump(), Expected(text).dump());
}

// An integer past 64 bits: simdjson refuses the whole text; nlohmann reads
// it as a float. Every job is still read.
TEST(JsonDocumentTest, WhatSimdjsonRefusesStillReads) {
  std::string text = R"({"jobs": [{"job_id": 7, "user_id": 0, "group_id": 0, "name": "a",)"
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
  std::string cut = "{\"jobs\": [";
  EXPECT_TRUE(ParseKept(cut, {"jobs", &kFields}).is_discarded());
  EXPECT_FALSE(ParseJobsJson("squeue: error: slurm_load_jobs").ok());
}

// A fingerprint covers the kept fields alone; an object the caller knows
// is left null, unconverted.
TEST(JsonDocumentTest, FingerprintsOfKeptFieldsAndKnownObjectsLeftNull) {
  std::string text = R"({"jobs": [{"job_id": 7, "name": "a", "accrue_time": 1},)"
                     R"( {"job_id": 7, "name": "a", "accrue_time": 2},)"
                     R"( {"job_id": 7, "name": "b"}, {"job_id": 7, "nodes": "a"}, 5]})";
  std::vector<uint64_t> prints;
  KeptFields kept{"jobs", &kFields, &prints};
  json all = ParseKept(text, kept);
  ASSERT_EQ(prints.size(), 5u);
  EXPECT_EQ(prints[0], prints[1]) << "accrue_time is not kept";
  EXPECT_NE(prints[0], prints[2]);
  EXPECT_NE(prints[2], prints[3]) << "the same value under another name";
  EXPECT_NE(prints[0], 0u);
  EXPECT_EQ(prints[4], 0u) << "no object";
  EXPECT_EQ(all["jobs"][0]["name"], "a");
  const uint64_t known = prints[0];
  kept.known = [known](uint64_t print) { return print == known; };
  json some = ParseKept(text, kept);
  EXPECT_TRUE(some["jobs"][0].is_null());
  EXPECT_TRUE(some["jobs"][1].is_null());
  EXPECT_EQ(some["jobs"][2]["name"], "b");
  EXPECT_EQ(some["jobs"][4], 5);
}

// Every field of a job, as text, to compare two readings.
std::string Described(const SlurmJob& job) {
  auto opt = [](const auto& value) {
    std::ostringstream out;
    if (value) out << *value;
    return value ? out.str() : std::string("-");
  };
  std::ostringstream out;
  out << job.job_id << '|' << job.name << '|' << job.user << '|' << job.uid << '|' << job.gid << '|'
      << job.state << '|' << job.node_list << '|' << job.num_nodes << '|' << job.partition << '|'
      << job.std_out << '|' << job.work_dir << '|' << opt(job.start_time) << '|'
      << opt(job.end_time) << '|' << job.exit_code << '|' << job.array_job_id << '|'
      << opt(job.array_task_id) << '|' << opt(job.het_job_id) << '|' << opt(job.het_job_offset);
  return out.str();
}

std::vector<std::string> Described(const jobmon::Expected<JobsAnswer>& answer) {
  std::vector<std::string> out;
  if (!answer) return {"error: " + answer.error().message};
  for (const SlurmJob& job : answer->jobs) out.push_back(Described(job));
  for (const std::string& error : answer->errors) out.push_back("errors: " + error);
  return out;
}

// Reads `text` alone and with `reader`; both must agree.
void ExpectSameReading(JobsReader& reader, std::string text, const std::string& what) {
  std::string copy = text;
  EXPECT_EQ(Described(reader.Read(text)), Described(ParseJobsJson(copy))) << what;
}

TEST(JobsReaderTest, SuccessiveAnswersReadAsEachAloneOnEveryVersion) {
  int versions = 0;
  for (const auto& dir : fs::directory_iterator(std::string(JOBMON_FIXTURES) + "/slurm")) {
    if (!dir.is_directory() || !fs::exists(dir.path() / "squeue-all.json")) continue;
    const std::string text = Read(dir.path() / "squeue-all.json");
    JobsReader reader;
    ExpectSameReading(reader, text, dir.path().string() + ", first");
    ExpectSameReading(reader, text, dir.path().string() + ", unchanged");
    // One job changes state; every other one is as it was.
    json doc = json::parse(text);
    ASSERT_GE(doc["jobs"].size(), 2u) << dir.path();
    json& state = doc["jobs"][1]["job_state"];
    state = state.is_array() ? json::array({"CANCELLED"}) : json("CANCELLED");
    const std::string changed = doc.dump();
    ExpectSameReading(reader, changed, dir.path().string() + ", one job changed");
    ExpectSameReading(reader, changed, dir.path().string() + ", changed, then unchanged");
    // A job gone, and one back as it was two answers ago.
    json fewer = json::parse(text);
    fewer["jobs"].erase(0);
    ExpectSameReading(reader, fewer.dump(), dir.path().string() + ", one job gone");
    ExpectSameReading(reader, text, dir.path().string() + ", back");
    ++versions;
  }
  EXPECT_GE(versions, 4) << "22.05, 23.11, 24.11 and 25.11 are recorded";
}

// Same fields, other values: two jobs alike but for one field never share
// a reading; a value moved to another field is another job.
TEST(JobsReaderTest, AJobDifferingInOneValueIsReadAgain) {
  JobsReader reader;
  const std::string one =
      R"({"jobs": [{"job_id": 7, "user_id": 1000, "group_id": 1000, "name": "a", "nodes": "n1"}]})";
  ExpectSameReading(reader, one, "first");
  for (
      const std::string& other : std::vector<std::string>{
          R"({"jobs": [{"job_id": 8, "user_id": 1000, "group_id": 1000, "name": "a", "nodes": "n1"}]})",
          R"({"jobs": [{"job_id": 7, "user_id": 1000, "group_id": 1000, "name": "n1", "nodes": "a"}]})",
          R"({"jobs": [{"job_id": 7, "user_id": 1000, "group_id": 1000, "name": "a", "nodes": "n1",)"
          R"( "accrue_time": 1180591620717411303424}]})",
          R"({"jobs": [{"job_id": 7, "user_id": 1000, "group_id": 1000, "name": "a", "nodes": "n2"}]})",
          one}) {
    ExpectSameReading(reader, other, other);
  }
  const std::string twice =
      R"({"jobs": [{"job_id": 7, "user_id": 1000, "group_id": 1000, "name": "a"},)"
      R"( {"job_id": 7, "user_id": 1000, "group_id": 1000, "name": "a"}]})";
  ExpectSameReading(reader, twice, "listed twice alike");
  ExpectSameReading(reader, twice, "listed twice alike, again");
}

}  // namespace
}  // namespace jobmon::slurm
