// The scanner on hostile input: a correct report or a clear error, never a
// crash, memory bounded by the read buffer.

#include "jobmon/triage/log_scan.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "jobmon/triage/report.h"
#include "jobmon/triage/step_lines.h"
#include "jobmon/triage/triage.h"
#include "scan_patterns.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

namespace fs = std::filesystem;

class LogScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scanner_ = &SharedScanner();
    dir_ = fs::temp_directory_path() / ("jobmon-scan-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  ScanFacts Scan(std::string_view text) {
    auto facts = scanner_->ScanText(text);
    EXPECT_TRUE(facts.ok()) << facts.error().message;
    return facts.ok() ? std::move(facts.value()) : ScanFacts{};
  }
  // Everything the CLI would do with the facts must work too.
  void RenderAll(const ScanFacts& facts) {
    AnalysisContext context;
    context.now = 1795168800;
    TriageReport report = Analyze(facts, context);
    EXPECT_FALSE(RenderMarkdown(report).empty());
    // Strict: throws on invalid UTF-8 anywhere in the report.
    std::string json = ToJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    EXPECT_NO_THROW({
      auto parsed = nlohmann::json::parse(json);
      (void)parsed;
    });
  }
  const LogScanner* scanner_ = nullptr;
  fs::path dir_;
};

TEST_F(LogScanTest, EmptyInput) {
  ScanFacts facts = Scan("");
  EXPECT_EQ(facts.lines, 0u);
  EXPECT_TRUE(facts.classes.empty());
  TriageReport report = Analyze(facts, {});
  // Nothing says the job died (unknown-death needs positive
  // evidence of an abrupt end); without Slurm's view it is unknown.
  EXPECT_EQ(report.status, JobStatus::kUnknown);
  RenderAll(facts);
}

TEST_F(LogScanTest, LineNumbersAndUnterminatedLastLine) {
  ScanFacts facts = Scan("a\nb\nTraceback (most recent call last):\nc\nOut of memory");
  EXPECT_EQ(facts.lines, 5u);
  EXPECT_EQ(facts.classes.at("python-exception").first.line, 3u);
  EXPECT_EQ(facts.classes.at("oom-host").first.line, 5u);
  EXPECT_EQ(facts.tail.back().text, "Out of memory");
}

TEST_F(LogScanTest, HarmlessLinesNeverCount) {
  ScanFacts facts = Scan(
      "NCCL WARN MSCCL++: Feature not enabled\n"
      "Failed call to cuInit: UNKNOWN ERROR (303)\n"
      "srun: error: node1: task 0: Exited with exit code 143\n"
      "NCCL WARN Timeout waiting for peer\n");
  ASSERT_EQ(facts.classes.size(), 1u);
  EXPECT_EQ(facts.classes.at("nccl-timeout").first.line, 4u);
  EXPECT_EQ(facts.harmless_lines, 3u);
}

TEST_F(LogScanTest, GpuOomLineIsNotAHostOom) {
  ScanFacts facts = Scan("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8 bytes\n");
  EXPECT_TRUE(facts.classes.count("oom-gpu"));
  EXPECT_FALSE(facts.classes.count("oom-host"));
}

TEST_F(LogScanTest, BinaryJunkAndInvalidUtf8) {
  std::mt19937 rng(1);
  std::string junk(4 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  junk += "\n\xff\xfe Traceback (most recent call last): \xc3\x28 \x01\x02\n";
  // Tokens lifted from lines (hosts, job ids) must be sanitised too: found by fuzz_triage_log.
  junk += "SLURM_JOB_ID=4\xfe\xff\nNODE_EXIT host=node\xc3\x28 exit=137\n";
  // Lead bytes past U+10FFFF, overlongs and surrogates are invalid UTF-8 too
  // (found by fuzz_triage_log: 0xF5 slipped through a hand-written check).
  junk +=
      "SLURM_JOB_ID=700\xf5\x80\x80\x80 \xc0\xaf \xed\xa0\x80\nOut of memory \xf7\xbf\xbf\xbf\n";
  ScanFacts facts = Scan(junk);
  ASSERT_TRUE(facts.classes.count("python-exception"));
  const std::string& text = facts.classes.at("python-exception").last.text;
  EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos) << "invalid bytes replaced";
  EXPECT_EQ(text.find('\x01'), std::string::npos) << "control characters replaced";
  RenderAll(facts);
}

// A C1 control in valid UTF-8 (U+009B, 8-bit CSI: an escape sequence to
// an 8-bit terminal) came through the scan's own sanitiser into evidence
// that `jobmon diagnose` prints; only C0 controls and DEL were replaced.
TEST_F(LogScanTest, C1ControlsDoNotReachEvidence) {
  ScanFacts facts = Scan(
      "Traceback (most recent call last): \xc2\x9b"
      "2J\xc2\x85 x\n");
  ASSERT_TRUE(facts.classes.count("python-exception"));
  for (const std::string& text :
       {facts.classes.at("python-exception").last.text, facts.tail.back().text}) {
    EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << "CSI (U+009B) replaced";
    EXPECT_EQ(text.find("\xc2\x85"), std::string::npos) << "NEL (U+0085) replaced";
    EXPECT_NE(text.find(std::string("\xef\xbf\xbd") + "2J"), std::string::npos) << text;
  }
}

TEST_F(LogScanTest, A100MegabyteLineIsScannedInBoundedPieces) {
  std::string path = (dir_ / "long.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "start\nTraceback (most recent call last): ";
    std::string block(1 << 20, 'x');
    for (int i = 0; i < 100; ++i) out << block;
    out << " NCCL WARN Timeout at the end\nafter\n";
  }
  auto facts = scanner_->ScanFile(path);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_EQ(facts->long_lines, 1u);
  EXPECT_EQ(facts->lines, 3u);
  EXPECT_EQ(facts->classes.at("python-exception").first.line, 2u);
  EXPECT_EQ(facts->classes.at("nccl-timeout").first.line, 2u);
  EXPECT_LE(facts->classes.at("python-exception").first.text.size(), kEvidenceChars + 4);
  RenderAll(*facts);
}

// Millions of step lines in bounded memory (the series keeps no line per
// step). Two million: the same property as ten, at a fifth of its minutes
// under ASan.
TEST_F(LogScanTest, MillionsOfStepLines) {
  constexpr int kSteps = 2'000'000;
  std::string path = (dir_ / "steps.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "PASSTHROUGH_ARGS=steps=20000000 enable_checkpointing=true\n"
        << "Config param checkpoint_period: 1000\n";
    std::string block;
    for (int step = 0; step < kSteps; ++step) {
      block += "completed step: ";
      block += std::to_string(step);
      block += ", seconds: 0.5\n";
      if (block.size() > (1 << 20)) {
        out.write(block.data(), static_cast<std::streamsize>(block.size()));
        block.clear();
      }
    }
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  auto facts = scanner_->ScanFile(path);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  const StepSeries& series = facts->steps[static_cast<size_t>(StepProfile::kMaxText)];
  EXPECT_EQ(series.count(), static_cast<size_t>(kSteps));
  EXPECT_EQ(series.last()->step, kSteps - 1);
  AnalysisContext context;
  context.now = 0;
  TriageReport report = Analyze(*facts, context);
  EXPECT_EQ(*report.progress.last_periodic_checkpoint, kSteps - 1000);
  EXPECT_DOUBLE_EQ(*report.progress.steady_step_seconds, 0.5);
  EXPECT_EQ(facts->tail.size(), kTailLines);
  EXPECT_EQ(facts->head.size(), kHeadLines);
}

TEST_F(LogScanTest, FileTruncatedWhileBeingRead) {
  std::string path = (dir_ / "shrinking.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 400'000; ++i) out << "completed step: " << i << ", seconds: 1.0\n";
  }
  uint64_t full = fs::file_size(path);
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::thread truncate([&] { fs::resize_file(path, 1000); });
  auto facts = scanner_->ScanFd(fd);
  truncate.join();
  close(fd);
  ASSERT_TRUE(facts.ok());
  // Whichever won the race, the result is consistent: all of it, the
  // already-truncated file, or a prefix flagged as truncated.
  if (facts->bytes != full && facts->bytes != 1000) {
    EXPECT_TRUE(facts->shrank_while_reading) << facts->bytes << " of " << full;
  }
  RenderAll(*facts);
}

TEST_F(LogScanTest, TruncatedBelowTheReadOffsetIsFlagged) {
  std::string path = (dir_ / "cut.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 100'000; ++i) out << "completed step: " << i << ", seconds: 1.0\n";
  }
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(lseek(fd, 1 << 20, SEEK_SET), 1 << 20);  // a reader that got this far...
  fs::resize_file(path, 1000);                       // ...when the file was cut
  auto facts = scanner_->ScanFd(fd);
  close(fd);
  ASSERT_TRUE(facts.ok());
  EXPECT_TRUE(facts->shrank_while_reading);
  TriageReport report = Analyze(*facts, {});
  EXPECT_NE(report.warnings.at(0).find("shrank while being read"), std::string::npos);
}

TEST_F(LogScanTest, FileRotatedWhileBeingRead) {
  std::string path = (dir_ / "rotating.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 100'000; ++i) out << "completed step: " << i << ", seconds: 1.0\n";
  }
  uint64_t full = fs::file_size(path);
  int fd = open(path.c_str(), O_RDONLY);
  fs::rename(path, path + ".1");
  std::ofstream(path) << "a new, unrelated log\n";
  auto facts = scanner_->ScanFd(fd);
  close(fd);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->bytes, full) << "the open file is read to its end";
  EXPECT_EQ(facts->steps[0].last()->step, 99'999);
}

TEST_F(LogScanTest, StatusFromHeadAndTailSkipsTheMiddle) {
  std::string path = (dir_ / "big.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "Job start: 2026-11-20T10:00:00Z\nPASSTHROUGH_ARGS=steps=50000\n";
    for (int i = 0; i < 40'000; ++i) {
      if (i == 20'000) out << "Traceback (most recent call last):\n";  // only a full scan sees it
      out << "completed step: " << i << ", seconds: 1.0\n";
    }
    out << "================ JOB SUMMARY ================\nEnd: 2026-11-21T10:00:00Z\n"
        << "Status: SUCCESS (exit 0)\n";
  }
  auto quick = scanner_->ScanHeadAndTail(path);
  auto full = scanner_->ScanFile(path);
  ASSERT_TRUE(quick.ok() && full.ok());
  EXPECT_FALSE(quick->classes.count("python-exception")) << "the middle was not read";
  EXPECT_TRUE(full->classes.count("python-exception"));
  TriageReport quick_report = Analyze(*quick, {});
  TriageReport full_report = Analyze(*full, {});
  EXPECT_EQ(quick_report.status, JobStatus::kCompleted);
  EXPECT_EQ(quick_report.status, full_report.status);
  EXPECT_EQ(*quick_report.progress.last_step, 39'999);
  EXPECT_EQ(*quick_report.progress.total_steps, 50'000);
}

TEST_F(LogScanTest, StatusFromHeadAndTailFallsBackWithoutTimestamps) {
  std::string path = (dir_ / "undated.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "Job start: 2026-11-20T10:00:00Z\n";
    for (int i = 0; i < 40'000; ++i) out << "completed step: " << i << ", seconds: 1.0\n";
  }
  auto quick = scanner_->ScanHeadAndTail(path);
  ASSERT_TRUE(quick.ok());
  EXPECT_EQ(quick->lines, 40'001u) << "whole file scanned";
  EXPECT_EQ(quick->steps[0].first()->step, 0);
}

// A sparse terabyte costs its user nothing: the whole-file fallback of an
// undated tail must not read it all (the daemon's and `jobmon status`'s
// reads of a log its user controls).
TEST_F(LogScanTest, AnUndatedTailOfAHugeLogDoesNotFallBackToReadingItAll) {
  std::string path = (dir_ / "sparse.log").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "Job start: 2026-11-20T10:00:00Z\ncompleted step: 0, seconds: 1.0\n";
  }
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(kWholeScanFallbackBytes) + (1 << 20)), 0);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    for (int i = 1; i < 100; ++i) out << "\ncompleted step: " << i << ", seconds: 1.0";
    out << "\n";
  }
  auto quick = scanner_->ScanHeadAndTail(path);
  ASSERT_TRUE(quick.ok()) << quick.error().message;
  EXPECT_EQ(quick->lines, 0u) << "head and tail only, not the whole file";
  EXPECT_EQ(quick->bytes, static_cast<uint64_t>(fs::file_size(path)));
}

// Chunks are matched on two threads and consumed in order (match_ahead.h):
// a log cut into many small chunks reads exactly as in one.
TEST_F(LogScanTest, ManySmallChunksReadAsOne) {
  ScanOptions small;
  small.buffer_bytes = 4096;
  auto chunked = LogScanner::Create(small);
  ASSERT_TRUE(chunked) << chunked.error().message;
  for (const char* name : {"real/pytorch/srun-usr1-checkpoint", "real/pytorch/torchrun-timelimit",
                           "real/pytorch/srun-node-fail", "logs/cancelled-after-hang"}) {
    const std::string path = std::string(JOBMON_FIXTURES) + "/" + name + ".log";
    auto whole = scanner_->ScanFile(path);
    auto pieces = (*chunked)->ScanFile(path);
    ASSERT_TRUE(whole && pieces) << name;
    ASSERT_GT(whole->bytes, 4 * small.buffer_bytes) << name << ": not a many-chunk log";
    AnalysisContext context;
    context.now = 4102444800;
    EXPECT_EQ(ToJson(Analyze(*pieces, context)).dump(1), ToJson(Analyze(*whole, context)).dump(1))
        << name;
    EXPECT_EQ(pieces->lines, whole->lines) << name;
    ASSERT_EQ(pieces->tail.size(), whole->tail.size()) << name;
    EXPECT_EQ(pieces->tail.back().text, whole->tail.back().text) << name;
  }
}

// Another task's copy of the step line before it ("1: X" after "0: X") is
// read from that line (chunk_reading.h, Line::copy_of_back), and still
// counts as its own task's and rank's step; a line that only looks alike
// (another label length, another prefix) is read anew.
TEST_F(LogScanTest, ATasksCopyOfTheStepLineBeforeIsItsOwn) {
  const ScanFacts facts = Scan(
      "0: [default0]:completed step: 5, seconds: 1.0\n"
      "1: [default0]:completed step: 5, seconds: 1.0\n"
      "12: [default0]:completed step: 5, seconds: 1.0\n"
      "13: [default1]:completed step: 5, seconds: 1.0\n"
      "0: [default0]:completed step: 6, seconds: 2.0\n"
      "1: [default0]:completed step: 6, seconds: 2.0\n"
      "2: [default0]:completed step: 6, seconds: 2.0\n");
  const auto& ranks = facts.rank_progress.ranks();
  ASSERT_EQ(ranks.size(), 5u);
  EXPECT_EQ(ranks.at(RankId{.task = 0, .local = 0}).step, 6);
  EXPECT_EQ(ranks.at(RankId{.task = 1, .local = 0}).step, 6);
  EXPECT_EQ(ranks.at(RankId{.task = 2, .local = 0}).step, 6);
  EXPECT_EQ(ranks.at(RankId{.task = 12, .local = 0}).step, 5);
  EXPECT_EQ(ranks.at(RankId{.task = 13, .local = 1}).step, 5);
  EXPECT_EQ(ranks.at(RankId{.task = 2, .local = 0}).line, 7u);
  const std::map<int, int64_t> tasks = {{0, 6}, {1, 6}, {2, 6}, {12, 5}, {13, 5}};
  EXPECT_EQ(facts.last_step_by_task, tasks);
  const auto& lead = facts.steps[static_cast<size_t>(StepProfile::kMaxText)];
  EXPECT_EQ(lead.count(), 2u);
  ASSERT_TRUE(lead.last());
  EXPECT_EQ(lead.last()->step, 6);
  EXPECT_EQ(lead.last()->line, 5u);
}

// A line that repeats the one before it (the same text after a label as
// long, or none) is read from that line, not scanned again
// (chunk_reading.cc): every fixture log, and a log of repeats of every kind
// the scan reads, read so, in one chunk and in many, reads exactly as
// scanned line by line.
TEST_F(LogScanTest, LinesThatRepeatTheLineBeforeReadAsIfScanned) {
  std::string repeats;
  for (int round = 0; round < 60; ++round) {
    const std::string step = std::to_string(round);
    // Sixteen tasks' copies: repeats enough (ReadChunk's bounds) for the
    // short ones after them to be read from the line before too.
    for (int task = 0; task < 16; ++task)
      repeats += std::to_string(task) + ": [default0]:completed step: " + step + ", seconds: 1.0\n";
    repeats += "step " + step + " loss 2.0\nstep " + step + " loss 2.0\n";
    repeats += " 1: iteration " + step + " loss 3\n11: iteration " + step + " loss 3\n";
    repeats += "1: iteration " + step + " loss 3\n";
    repeats += "0: completed step: " + step + ", seconds: 2.0\r\n1: completed step: " + step +
               ", seconds: 2.0\r\n";
    repeats += "0: 2026-11-20 10:00:0" + std::to_string(round % 10) +
               ",000 INFO checkpoint_manager: saved checkpoint at step " + step + "\n";
    repeats += "1: 2026-11-20 10:00:0" + std::to_string(round % 10) +
               ",000 INFO checkpoint_manager: saved checkpoint at step " + step + "\n";
    repeats +=
        "0: NCCL WARN MSCCL++: Feature not enabled\n4: NCCL WARN MSCCL++: Feature not enabled\n";
    repeats += "\n\n0: \n1: \nplain text\nplain text\n";
  }
  for (const char* label : {"3: ", "4: ", "5: "})
    repeats += std::string(label) + "Traceback (most recent call last):\n";
  for (const char* label : {"3: ", "4: ", "5: "})
    repeats +=
        std::string(label) + "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  repeats += "srun: error: node2: task 1: Exited with exit code 1\n";
  repeats += "srun: error: node2: task 1: Exited with exit code 1\n";
  const fs::path path = dir_ / "repeats.log";
  std::ofstream(path) << repeats;

  std::vector<std::string> logs = {path.string()};
  for (const char* dir : {"logs", "real"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(std::string(JOBMON_FIXTURES) + "/" + dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".log" &&
          entry.file_size() < (4 << 20))
        logs.push_back(entry.path().string());
    }
  }
  ASSERT_GT(logs.size(), 50u);
  std::vector<std::unique_ptr<LogScanner>> scanners;
  for (size_t buffer : {size_t{1} << 20, size_t{4096}}) {
    for (bool rescan : {true, false}) {
      ScanOptions options;
      options.buffer_bytes = buffer;
      options.rescan_repeated_lines = rescan;
      auto scanner = LogScanner::Create(options);
      ASSERT_TRUE(scanner) << scanner.error().message;
      scanners.push_back(std::move(scanner.value()));
    }
  }
  uint64_t repeated = 0;
  for (const std::string& log : logs) {
    std::vector<ScanFacts> read;
    for (const auto& scanner : scanners) {
      auto facts = scanner->ScanFile(log);
      ASSERT_TRUE(facts) << log << ": " << facts.error().message;
      read.push_back(std::move(facts.value()));
    }
    EXPECT_EQ(read[0].repeated_lines, 0u) << log;
    EXPECT_EQ(read[2].repeated_lines, 0u) << log;
    repeated += read[1].repeated_lines;
    AnalysisContext context;
    context.now = 4102444800;
    // Each chunk size's two ways (a line longer than 4 KiB reads otherwise
    // in pieces: ManySmallChunksReadAsOne).
    for (size_t i : {1, 3}) {
      const ScanFacts& scanned = read[i - 1];
      EXPECT_EQ(ToJson(Analyze(read[i], context)).dump(1),
                ToJson(Analyze(scanned, context)).dump(1))
          << log << ", scanner " << i;
      EXPECT_EQ(read[i].last_step_by_task, scanned.last_step_by_task) << log;
      EXPECT_EQ(read[i].lines, scanned.lines) << log;
      ASSERT_EQ(read[i].rank_progress.ranks().size(), scanned.rank_progress.ranks().size()) << log;
      for (const auto& [rank, progress] : scanned.rank_progress.ranks()) {
        EXPECT_EQ(read[i].rank_progress.ranks().at(rank).step, progress.step) << log;
        EXPECT_EQ(read[i].rank_progress.ranks().at(rank).line, progress.line) << log;
      }
    }
    if (log == path.string()) {
      EXPECT_GT(read[1].repeated_lines, 1200u) << "the repeats are read from the line before";
      EXPECT_GT(read[3].repeated_lines, 1200u) << "in 4 KiB chunks too";
    }
    if (HasFailure()) return;
  }
  EXPECT_GT(repeated, 2000u) << "fixtures with repeats";
}

TEST_F(LogScanTest, ErrorsAreClear) {
  auto missing = scanner_->ScanFile((dir_ / "nope.log").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos);
  auto directory = scanner_->ScanFile(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("is a directory"), std::string::npos);
  auto bad_regex = LogScanner::Create({"step=(\\d+"});
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_NE(bad_regex.error().message.find("bad step regex"), std::string::npos);
  auto no_group = LogScanner::Create({"step=(\\d+)"});
  ASSERT_FALSE(no_group.ok());
  EXPECT_NE(no_group.error().message.find("(?P<step>"), std::string::npos);
  ScanOptions unknown_pattern;
  unknown_pattern.patterns_left_out = {1u << 20};
  auto left_out = LogScanner::Create(unknown_pattern);
  ASSERT_FALSE(left_out.ok());
  EXPECT_NE(left_out.error().message.find("numbered 0 to"), std::string::npos);
}

// The step formats read at the generic keyword's matches instead of by
// Hyperscan (scan_patterns.h PatternDef::carried_test) are read as before,
// and still when a scan leaves that keyword out (then they are compiled).
TEST_F(LogScanTest, CarriedStepFormatsAreReadWithOrWithoutTheirCarrier) {
  const std::string text =
      "0: completed step: 1, seconds: 1.0, loss: 2\n"
      "0: completed step: 2, seconds: 1.0, loss: 2\n"
      " iteration        3/     100 | elapsed time per iteration (ms): 500.0 |\n"
      "step:  4  \x1b[32mloss:  2.1\n"
      "[Rank 0] step=5, skipped=0, lr=[0.1]\n";
  const std::vector<PatternDef> patterns = AllPatterns();
  std::vector<unsigned> carried;
  int carrier = -1;
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (!patterns[i].carried_test) continue;
    carried.push_back(static_cast<unsigned>(i));
    carrier = patterns[i].carrier;
  }
  ASSERT_EQ(carried.size(), 4u);
  ASSERT_GE(carrier, 0);
  ScanOptions without_carrier;
  without_carrier.patterns_left_out = {static_cast<unsigned>(carrier)};
  for (const ScanOptions& options : {ScanOptions{}, without_carrier}) {
    auto scanner = LogScanner::Create(options);
    ASSERT_TRUE(scanner.ok()) << scanner.error().message;
    auto facts = (*scanner)->ScanText(text);
    ASSERT_TRUE(facts.ok());
    for (unsigned id : carried) {
      EXPECT_TRUE(facts->matched_patterns[id])
          << patterns[id].expression << " left out: " << options.patterns_left_out.size();
    }
    EXPECT_EQ(facts->steps[static_cast<size_t>(StepProfile::kMaxText)].count(), 2u);
    EXPECT_EQ(facts->matched_patterns[static_cast<size_t>(carrier)],
              options.patterns_left_out.empty());
  }
}

// Progress from real programs' output: the scanner and Analyze agree.
class RealStepsTest : public LogScanTest {
 protected:
  ScanFacts ScanFixture(const std::string& relative) {
    auto facts = scanner_->ScanFile(std::string(JOBMON_FIXTURES) + "/real/" + relative);
    EXPECT_TRUE(facts.ok()) << relative;
    return facts.ok() ? std::move(facts.value()) : ScanFacts{};
  }
  static const StepSeries& Series(const ScanFacts& facts, StepProfile profile) {
    return facts.steps[static_cast<size_t>(profile)];
  }
};

TEST_F(RealStepsTest, PlainPyTorchLoopsUnderSrunAndTorchrun) {
  // train_ddp.py prints "step N loss X" for N = 1..40 (srun) and
  // "[default0]:step N loss X" under torchrun --tee.
  for (const char* name : {"pytorch/srun-healthy.log", "pytorch/torchrun-healthy.log"}) {
    ScanFacts facts = ScanFixture(name);
    const StepSeries& series = Series(facts, StepProfile::kGeneric);
    ASSERT_EQ(series.count(), 40u) << name;
    EXPECT_EQ(series.first()->step, 0) << name << ": a loop counting from 1, shifted";
    EXPECT_EQ(series.last()->step, 39) << name << ": step 40, the 40th";
    EXPECT_EQ(series.repeats(), 0u) << name;
    Progress progress = Analyze(facts, {}).progress;
    EXPECT_EQ(progress.profile, "generic") << name;
    EXPECT_FALSE(progress.restored) << name;
    EXPECT_EQ(progress.steps_this_run, 40u) << name;
  }
  // A rank stopped at step 40 of 50 in srun-gloo-timeout: its last step is there too.
  ScanFacts stuck = ScanFixture("pytorch/srun-gloo-timeout.log");
  ASSERT_TRUE(Series(stuck, StepProfile::kGeneric).last());
}

TEST_F(RealStepsTest, OneStrayStepLineIsNoTraining) {
  ScanFacts facts = Scan("step 3 of preprocessing loss 0\nloading data\nstep 9 loss 1.5\ndone\n");
  EXPECT_EQ(Series(facts, StepProfile::kGeneric).count(), 0u)
      << "fewer than kGenericMinSamples increasing samples";
  EXPECT_FALSE(Analyze(facts, {}).progress.last_step);
  ScanFacts decreasing = Scan("step 5 loss 1\nstep 2 loss 1\nstep 3 loss 1\nstep 4 loss 1\n");
  EXPECT_EQ(Series(decreasing, StepProfile::kGeneric).count(), 3u);
  EXPECT_EQ(Series(decreasing, StepProfile::kGeneric).first()->step, 2)
      << "a loop counting from 2: kept as printed";
}

// The generic prefilter finds its keywords anywhere (scan_patterns.cc);
// a keyword inside a word is still no step.
TEST_F(RealStepsTest, AKeywordInsideAWordIsNoStep) {
  std::string inside, alone;
  for (int i = 1; i <= 6; ++i) {
    inside += "substep " + std::to_string(i) + " loss 1.0\nmax_iter=" + std::to_string(i) +
              " lr 0.1\nSTEPPED:" + std::to_string(i) + " loss 2\n";
    alone += "Step: " + std::to_string(i) + " loss 1.0\n";
  }
  EXPECT_EQ(Series(Scan(inside), StepProfile::kGeneric).count(), 0u);
  EXPECT_EQ(Series(Scan(alone), StepProfile::kGeneric).count(), 6u) << "case folded";
}

TEST_F(RealStepsTest, TqdmFixtures) {
  // tests/fixtures/real/tqdm/make_fixtures.sh: real tqdm, HF-, Lightning-
  // and accelerate-shaped bars with nested evaluation and 1/1 checkpoint bars.
  ScanFacts hf = ScanFixture("tqdm/hf.log");
  const StepSeries& bar = Series(hf, StepProfile::kHuggingFace);
  ASSERT_TRUE(bar.last());
  EXPECT_EQ(bar.last()->step, 19);
  EXPECT_EQ(bar.repeats(), 0u) << "the nested 0/4, 4/4 and 0/1 bars are not steps";
  EXPECT_EQ(hf.total_steps, 20);
  Progress hf_progress = Analyze(hf, {}).progress;
  EXPECT_EQ(hf_progress.profile, "hf");
  EXPECT_EQ(hf_progress.last_step, 19);
  EXPECT_EQ(bar.first()->step, 0) << "the bar opened at 0/20 on the line that shows 5/20";
  EXPECT_FALSE(hf_progress.restored);
  EXPECT_GT(*hf_progress.steady_step_seconds, 0.0);

  ScanFacts lightning = ScanFixture("tqdm/lightning.log");
  const StepSeries& epochs = Series(lightning, StepProfile::kLightning);
  ASSERT_TRUE(epochs.last());
  EXPECT_EQ(epochs.last()->step, 2 * 8 - 1) << "two epochs of 8 batches";
  EXPECT_EQ(epochs.first()->step, 0);
  EXPECT_EQ(epochs.repeats(), 0u) << "validation bars and the per-epoch reset are no restart";
  EXPECT_EQ(Series(lightning, StepProfile::kHuggingFace).count(), 0u);
  EXPECT_EQ(Analyze(lightning, {}).progress.profile, "lightning");

  ScanFacts accelerate = ScanFixture("tqdm/accelerate.log");
  EXPECT_EQ(Series(accelerate, StepProfile::kHuggingFace).last()->step, 11);
  EXPECT_EQ(accelerate.total_steps, 12);
}

TEST_F(RealStepsTest, AnUnnestedEvaluationBarIsNotTheTrainingBar) {
  // HF's prediction bar is tqdm(total=len(eval_dataloader)) with no
  // description; alone (evaluate() after training) it is not nested.
  ScanFacts facts = Scan(
      "\r 50%|#####     | 10/20 [00:01<00:01,  9.50it/s]\n"
      "\r100%|##########| 20/20 [00:02<00:00,  9.50it/s]\n"
      "\r 60%|######    | 3/5 [00:00<00:00, 12.00it/s]\n");
  const StepSeries& bar = Series(facts, StepProfile::kHuggingFace);
  EXPECT_EQ(bar.last()->step, 19);
  EXPECT_EQ(bar.repeats(), 0u);
}

// --step-regex timing.
class CustomStepTest : public ::testing::Test {
 protected:
  static ScanFacts ScanWith(const std::string& regex, std::string_view text) {
    auto scanner = LogScanner::Create({regex});
    EXPECT_TRUE(scanner.ok()) << (scanner.ok() ? "" : scanner.error().message);
    if (!scanner.ok()) return {};
    auto facts = scanner.value()->ScanText(text);
    EXPECT_TRUE(facts.ok());
    return facts.ok() ? std::move(facts.value()) : ScanFacts{};
  }
  static const StepSeries& Custom(const ScanFacts& facts) {
    return facts.steps[static_cast<size_t>(StepProfile::kCustom)];
  }
};

TEST_F(CustomStepTest, UnitsOfTheSecondsGroup) {
  std::string text;
  for (int step = 0; step < 12; ++step) text += fmt::format("it {} took 23 ms\n", step);
  ScanFacts unit_in_line = ScanWith(R"(it (?P<step>\d+) took (?P<seconds>[\d.]+))", text);
  EXPECT_NEAR(*Custom(unit_in_line).SteadyStepSeconds(), 0.023, 1e-12) << "not 23 s";
  ScanFacts unit_in_group = ScanWith(R"(it (?P<step>\d+) took (?P<seconds>[\d.]+ ?m?s))", text);
  EXPECT_NEAR(*Custom(unit_in_group).SteadyStepSeconds(), 0.023, 1e-12);
  ScanFacts ms_group = ScanWith(R"(it (?P<step>\d+) took (?P<ms>\d+))", text);
  EXPECT_NEAR(*Custom(ms_group).SteadyStepSeconds(), 0.023, 1e-12);
  ScanFacts seconds = ScanWith(R"(s(?P<step>\d+) (?P<seconds>[\d.]+))", "s1 0.5s\ns2 0.5\n");
  EXPECT_DOUBLE_EQ(Custom(seconds).total_seconds(), 1.0);
  auto two = LogScanner::Create({R"((?P<step>\d+) (?P<ms>\d+) (?P<seconds>\d+))"});
  EXPECT_FALSE(two.ok());
}

TEST_F(CustomStepTest, LastStepTimeIsTheLinesOwnTimestamp) {
  // Each line stamped; the steps' seconds (2 s) sum to far more than the
  // 1 s between stamps: the last step's time must be its own stamp.
  std::string text;
  for (int step = 0; step < 50; ++step) {
    text += fmt::format("2026-11-20 10:00:{:02d} step {} time 2s\n", step, step);
  }
  ScanFacts facts = ScanWith(R"(step (?P<step>\d+) time (?P<seconds>\d+))", text);
  EXPECT_EQ(Custom(facts).last()->step, 49);
  EXPECT_DOUBLE_EQ(*facts.last_step_time[static_cast<size_t>(StepProfile::kCustom)],
                   1795168800.0 + 49);
}

TEST_F(CustomStepTest, UnstampedStepsCountFromTheTimestampBeforeThem) {
  ScanFacts facts = ScanWith(R"(step (?P<step>\d+) time (?P<seconds>[\d.]+))",
                             "2026-11-20 10:00:00 start\n"
                             "step 0 time 1.5\nstep 1 time 1.5\n"
                             "2026-11-20 10:01:00 eval done\n"
                             "step 2 time 1.5\nstep 3 time 1.5\n"
                             "unrelated line\n");
  EXPECT_DOUBLE_EQ(*facts.last_step_time[static_cast<size_t>(StepProfile::kCustom)],
                   1795168860.0 + 3.0)
      << "the 10:01:00 anchor plus steps 2 and 3, not 10:01:00 plus all four";
}

TEST_F(LogScanTest, StepTimeFromTheLinesOwnAbslTimestamp) {
  // T5X lines carry no step time without timing/steps_per_second: from the stamps.
  ScanFacts facts = Scan(
      "I1120 10:00:00.000000 1 logging_writer.py:48] [100] collection=train loss=2.0\n"
      "I1120 10:00:30.000000 1 logging_writer.py:48] [110] collection=train loss=1.9\n"
      "I1120 10:01:00.000000 1 logging_writer.py:48] [120] collection=train loss=1.8\n");
  const StepSeries& series = facts.steps[static_cast<size_t>(StepProfile::kT5x)];
  EXPECT_EQ(series.last()->step, 120);
  EXPECT_DOUBLE_EQ(*series.SteadyStepSeconds(), 3.0);
  auto at = facts.last_step_time[static_cast<size_t>(StepProfile::kT5x)];
  ASSERT_TRUE(at);
  EXPECT_DOUBLE_EQ(std::fmod(*at, 86400.0), 10 * 3600 + 60.0) << "the line's stamp, not + 3 s";
}

TEST_F(LogScanTest, StepTimeFromADetectron2StyleStamp) {
  // detectron2's logger: "[MM/DD HH:MM:SS name]: ", no year; maybe coloured.
  ScanFacts facts = Scan(
      "[11/20 10:00:00 d2.engine]: Starting training from iteration 0\n"
      "[11/20 10:00:20 d2.utils.events]:  eta: 0:01:00  iter: 19  total_loss: 0.5\n"
      "[11/20 10:00:40 d2.utils.events]:  eta: 0:00:40  iter: 39  total_loss: 0.4\n");
  const StepSeries& series = facts.steps[static_cast<size_t>(StepProfile::kGeneric)];
  ASSERT_TRUE(series.last()) << "two lines of one template are a progress line";
  EXPECT_EQ(series.last()->step, 39);
  auto at = facts.last_step_time[static_cast<size_t>(StepProfile::kGeneric)];
  ASSERT_TRUE(at);
  EXPECT_DOUBLE_EQ(std::fmod(*at, 86400.0), 10 * 3600 + 40.0);
  EXPECT_EQ(ParseYearlessTimestamp("\x1b[32m[11/20 10:00:40 d2]: \x1b[0m x", 2026),
            ParseYearlessTimestamp("[11/20 10:00:40] d2 INFO: x", 2026))
      << "coloured on a terminal, the file handler's own form";
  EXPECT_TRUE(ParseYearlessTimestamp("[11/20 10:00:40] d2 INFO: x", 2026));
  EXPECT_FALSE(ParseYearlessTimestamp("[13/20 10:00:40 x]: a", 2026)) << "no month 13";
  EXPECT_FALSE(ParseYearlessTimestamp("[11/20 10:00 x]: a", 2026));
}

TEST_F(LogScanTest, StepTimeFromUnixSecondsOnTheLine) {
  // time.time() as a script prints it, after a time key or first on the line.
  ScanFacts facts = Scan(
      "ts=1795896380.500 step=1 loss=0.9\n"
      "ts=1795896381.500 step=2 loss=0.8\n"
      "ts=1795896383.500 step=4 loss=0.7\n");
  const StepSeries& series = facts.steps[static_cast<size_t>(StepProfile::kGeneric)];
  ASSERT_TRUE(series.last());
  EXPECT_EQ(series.last()->step, 3) << "a counter from 1, kept from 0 (step_filter.h)";
  auto at = facts.last_step_time[static_cast<size_t>(StepProfile::kGeneric)];
  ASSERT_TRUE(at);
  EXPECT_DOUBLE_EQ(*at, 1795896383.5);
  EXPECT_EQ(ParseEpochStamp("1795896383.25 step 4"), 1795896383.25);
  EXPECT_EQ(ParseEpochStamp(R"({"time": 1795896383, "step": 4})"), 1795896383.0);
  EXPECT_FALSE(ParseEpochStamp("tried to allocate 1795896383 bytes")) << "no time key";
  EXPECT_FALSE(ParseEpochStamp("ts=17958963831 step 4")) << "eleven digits";
  EXPECT_FALSE(ParseEpochStamp("wts=1795896383 step 4")) << "not the key ts";
}

TEST_F(LogScanTest, StepTimeFromATimeOfDayDatedByAnEarlierLine) {
  // logging's datefmt "%H:%M:%S": the date is in the run's first line; the
  // clock wraps past midnight into the next day.
  ScanFacts facts = Scan(
      "run started 2026-11-28T23:59:50 on 2 ranks\n"
      "23:59:58 INFO step 1/9 loss=0.9\n"
      "00:00:02 INFO step 2/9 loss=0.8\n");
  auto at = facts.last_step_time[static_cast<size_t>(StepProfile::kGeneric)];
  ASSERT_TRUE(at);
  EXPECT_DOUBLE_EQ(*at, *ParseIsoTimestamp("2026-11-29T00:00:02"));
  EXPECT_EQ(ParseClockStamp("[12:03:40] x"), 12 * 3600 + 3 * 60 + 40.0);
  EXPECT_EQ(ParseClockStamp("0: 12:03:40.5 INFO x"), 12 * 3600 + 3 * 60 + 40.5);
  EXPECT_FALSE(ParseClockStamp("12:03:40x"));
  EXPECT_FALSE(ParseClockStamp("25:03:40 x"));
  double evening = *ParseIsoTimestamp("2026-11-28T20:00:00");
  EXPECT_FALSE(DateClock(12.0, evening, 3600)) << "00:00:12 four hours on: a duration";
  EXPECT_EQ(DateClock(72000 + 60, evening, 3600), evening + 60);
  // Without a date before it, a time of day dates nothing.
  ScanFacts undated = Scan("12:00:00 INFO step 1 loss=1\n12:00:01 INFO step 2 loss=1\n");
  EXPECT_FALSE(undated.last_timestamp);
}

TEST_F(LogScanTest, StepsKeptFromZeroRememberHowTheProgramPrintedThem) {
  // A loop from 1 is kept from 0; the report adds the offset back.
  ScanFacts from_one = Scan("step 1 loss 0.9\nstep 2 loss 0.8\nstep 3 loss 0.7\n");
  const size_t generic = static_cast<size_t>(StepProfile::kGeneric);
  EXPECT_EQ(from_one.steps[generic].last()->step, 2);
  EXPECT_EQ(from_one.printed_offset[generic], 1);
  ScanFacts from_zero = Scan("step 0 loss 0.9\nstep 1 loss 0.8\nstep 2 loss 0.7\n");
  EXPECT_EQ(from_zero.steps[generic].last()->step, 2);
  EXPECT_EQ(from_zero.printed_offset[generic], 0);
  ScanFacts fraction = Scan(
      "epoch 1/1 step 1/3 loss 1\nepoch 1/1 step 2/3 loss 1\n"
      "epoch 1/1 step 3/3 loss 1\n");
  EXPECT_EQ(fraction.steps[generic].last()->step + fraction.printed_offset[generic], 3);
}

TEST_F(LogScanTest, ACheckpointSaveInTheLogsWordsHoldsTheStepBeforeIt) {
  const size_t generic = static_cast<size_t>(StepProfile::kGeneric);
  // Announced, then training stepped on: written.
  ScanFacts on = Scan(
      "step 0 loss 1\nstep 1 loss 1\nstep 2 loss 1\nSaving model checkpoint to out/c-2\n"
      "step 3 loss 1\nstep 4 loss 1\n");
  EXPECT_EQ(on.step_at_last_save[generic], 2);
  EXPECT_EQ(on.last_save_line, 4u);
  // Announced, then the run failed: not known to be written.
  ScanFacts failed = Scan(
      "step 0 loss 1\nstep 1 loss 1\nstep 2 loss 1\nSaving model checkpoint to out/c-2\n"
      "OSError: [Errno 28] No space left on device\n");
  EXPECT_FALSE(failed.step_at_last_save[generic]);
  // Reported done.
  ScanFacts done = Scan("step 0 loss 1\nstep 1 loss 1\nstep 2 loss 1\ncheckpoint saved in 3 s\n");
  EXPECT_EQ(done.step_at_last_save[generic], 2);
}

// The Ray stand-in's hang (tests/fixtures/ray): the actor on the second
// node stopped first, named with its host, from Ray's own line prefixes.
TEST_F(LogScanTest, ARayActorThatStoppedFirstIsNamedWithItsHost) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/ray/ray-actor-hang.log");
  std::stringstream text;
  text << in.rdbuf();
  ScanFacts facts = Scan(text.str());
  auto stopped = facts.rank_progress.Stopped();
  ASSERT_TRUE(stopped);
  EXPECT_EQ(RankProgress::Describe(*stopped).rfind("RayTrainWorker pid=3907 on 10.213.0.12 stopped "
                                                   "first: at step 24",
                                                   0),
            0u)
      << RankProgress::Describe(*stopped);
}

TEST_F(LogScanTest, StepsTheLearnedPassFindsBeforeAFailureAreBeforeIt) {
  // The learned progress line is read after the chunk's failure lines: its
  // steps before the traceback must not make the traceback look survived.
  std::string log;
  for (int step = 1; step <= 8; ++step)
    log += fmt::format("{{\"step\": {}, \"loss\": 0.{}}}\n", step, 9 - step);
  log += "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad\n";
  TriageReport r = Analyze(Scan(log), {});
  ASSERT_TRUE(r.progress.last_step) << "the learned line";
  ASSERT_FALSE(r.chain.events.empty());
  for (const CausalEvent& e : r.chain.events) {
    EXPECT_EQ(e.step_lines_after, 0u) << e.text;
    EXPECT_FALSE(e.survived) << e.text;
  }
  EXPECT_EQ(r.primary, "python-exception");
}

TEST_F(LogScanTest, FailureTimeAndHeartbeatTimeoutForTheTsdbWindow) {
  // What `jobmon diagnose` computes "heartbeats stopped" from: the
  // accusation's own stamp and the configured timeout.
  auto facts =
      scanner_->ScanFile(std::string(JOBMON_FIXTURES) + "/logs/heartbeat-false-positive.log");
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_EQ(facts->heartbeat_timeout, 100.0);
  TriageReport report = Analyze(*facts, {});
  ASSERT_EQ(report.primary, "heartbeat-timeout");
  EXPECT_EQ(report.heartbeat_timeout_seconds, 100.0);
  ASSERT_TRUE(report.failure_time);
  EXPECT_DOUBLE_EQ(*report.failure_time, 1795168873.0) << "2026-11-20 10:01:13, line 299";
  // A completed job has no failure time.
  ScanFacts done = Scan("2026-11-20T10:00:00Z start\nStatus: SUCCESS (exit 0)\nJOB SUMMARY\n");
  EXPECT_FALSE(Analyze(done, {}).failure_time);
}

}  // namespace
}  // namespace jobmon::triage
