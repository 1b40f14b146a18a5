// The monitor's progress model on real jobs, replayed at their own pace:
// tests/fixtures/real/progress holds real PyTorch DDP jobs (2 nodes, the dev
// cluster) in every progress family, with how each output file grew
// (`*.growth.tsv`: seconds since start, bytes). The file is written here as
// it grew and JobProgress polls it on a simulated clock, so a healthy run
// must never be called stalled and a hung run must be, within the stall
// bound after its last progress plus one poll. Prints the table per family.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "jobmon/monitor/job_progress.h"
#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

const fs::path kDir = fs::path(JOBMON_FIXTURES) / "real" / "progress";

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Growth {
  double at;
  size_t bytes;
};

std::vector<Growth> ReadGrowth(const fs::path& path) {
  std::vector<Growth> rows;
  std::ifstream in(path);
  double at = 0;
  size_t bytes = 0;
  while (in >> at >> bytes) rows.push_back({at, bytes});
  return rows;
}

struct Replay {
  std::string source;                   // what was followed
  std::optional<double> first_stall;    // seconds since start
  std::optional<double> last_progress;  // when the last progress was observed
  std::optional<double> threshold;      // the bound in force at the stall
  std::optional<double> step_seconds;   // the median step time measured
  std::optional<int64_t> last_step;
};

// Polls every `poll` seconds until `until`; the file has what it had then.
Replay ReplayRun(const std::string& name, double poll, double until) {
  const std::string log = Read(kDir / (name + ".log"));
  const std::vector<Growth> growth = ReadGrowth(kDir / (name + ".growth.tsv"));
  TempDir dir;
  const fs::path live = dir.path / "job.log";
  std::ofstream(live, std::ios::binary).close();
  triage::StallRule policy;
  policy.k = 5;
  policy.min_stall_seconds = 8;  // as the trial: the tightest a user sets
  const double start = 1'000'000;
  JobProgress job(1, live.string(), policy, start);
  size_t written = 0, row = 0;
  Replay replay;
  for (double t = poll; t <= until; t += poll) {
    while (row < growth.size() && growth[row].at <= t) ++row;
    size_t want = row == 0 ? 0 : std::min(growth[row - 1].bytes, log.size());
    if (want > written) {
      std::ofstream(live, std::ios::binary | std::ios::app)
          .write(log.data() + written, static_cast<std::streamsize>(want - written));
      written = want;
    }
    EXPECT_TRUE(job.Poll(start + t).ok());
    ProgressState state = job.Evaluate(start + t);
    // JOBMON_REPLAY_TRACE=<run name>: each poll's state, to see why a run
    // was judged as it was.
    if (const char* trace = std::getenv("JOBMON_REPLAY_TRACE"); trace && name == trace) {
      std::printf("  t=%6.1f step=%lld idle=%5.1f bound=%5.1f %s [%s]%s\n", t,
                  static_cast<long long>(state.last_step.value_or(-1)), state.idle_seconds,
                  state.threshold_seconds, ToString(state.phase), state.threshold_reason.c_str(),
                  state.announced_phase ? " in a phase" : "");
    }
    if (state.phase == Phase::kStalled && !replay.first_stall) {
      replay.first_stall = t;
      replay.threshold = state.threshold_seconds;
    }
    replay.step_seconds = state.median_interval;
    replay.last_step = state.last_step;
    if (state.last_step_time || state.last_activity_time) {
      replay.last_progress =
          std::max(state.last_step_time.value_or(0), state.last_activity_time.value_or(0)) - start;
    }
    if (replay.first_stall) break;
  }
  replay.source = job.progress_source();
  return replay;
}

std::vector<std::string> Families() {
  std::vector<std::string> families;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    std::string file = entry.path().filename().string();
    if (file.ends_with("-healthy.json")) families.push_back(file.substr(0, file.size() - 13));
  }
  std::sort(families.begin(), families.end());
  return families;
}

TEST(ProgressReplayTest, EveryFamilyIsFollowedSilentWhenHealthyAndAlertedWhenHung) {
  const auto families = Families();
  ASSERT_GE(families.size(), 12u) << "the fixtures of tests/fixtures/real/progress";
  std::printf("%-20s %5s %-44s %9s %8s %10s %9s\n", "family", "poll", "followed by", "step s",
              "healthy", "hang delay", "bound");
  for (double poll : {2.0, 10.0}) {
    for (const std::string& family : families) {
      SCOPED_TRACE(family + " poll " + std::to_string(poll));
      auto healthy_meta = nlohmann::json::parse(Read(kDir / (family + "-healthy.json")));
      auto hang_meta = nlohmann::json::parse(Read(kDir / (family + "-hang.json")));
      const double healthy_end = healthy_meta["job_end_seconds"].get<double>();
      Replay healthy = ReplayRun(family + "-healthy", poll, healthy_end);
      EXPECT_FALSE(healthy.first_stall) << "a false hang at " << healthy.first_stall.value_or(0)
                                        << " s (bound " << healthy.threshold.value_or(0) << " s)";
      EXPECT_FALSE(healthy.source.empty()) << "nothing followed";

      const double hang_at = hang_meta["hang"]["at_seconds"].get<double>();
      const double hang_end = hang_meta["job_end_seconds"].get<double>();
      Replay hang = ReplayRun(family + "-hang", poll, hang_end);
      EXPECT_TRUE(hang.first_stall) << "the hang was not seen before the job was cancelled";
      if (!hang.first_stall) {
        std::printf("%-20s %5.0f %-44.44s %9.3f %8s %10s (hang run: %s, last step %lld at %.1fs)\n",
                    family.c_str(), poll, healthy.source.c_str(), healthy.step_seconds.value_or(0),
                    healthy.first_stall ? "ALERT" : "silent", "MISSED", hang.source.c_str(),
                    static_cast<long long>(hang.last_step.value_or(-1)),
                    hang.last_progress.value_or(-1));
        continue;
      }
      EXPECT_GT(*hang.first_stall, hang_at - poll) << "no stall before the hang";
      EXPECT_TRUE(hang.last_progress);
      if (!hang.last_progress) continue;
      EXPECT_LE(*hang.first_stall, *hang.last_progress + *hang.threshold + poll)
          << "within the bound after the last progress, plus one poll";
      std::printf("%-20s %5.0f %-44.44s %9.3f %8s %9.1fs %8.1fs\n", family.c_str(), poll,
                  healthy.source.c_str(), healthy.step_seconds.value_or(0),
                  healthy.first_stall ? "ALERT" : "silent", *hang.first_stall - hang_at,
                  *hang.threshold);
    }
  }
}

}  // namespace
}  // namespace jobmon::monitor
