// Scrape mode's cadence (scrape_cadence.h): who is scraped every cycle.
#include "jobmon/monitor/scrape_cadence.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jobmon::monitor {
namespace {

ProgressState Training(double idle, double threshold = 60) {
  ProgressState state;
  state.phase = Phase::kTraining;
  state.last_step = 100;
  state.idle_seconds = idle;
  state.threshold_seconds = threshold;
  return state;
}

// The cadence as "why every-cycle full": e.g. "late 1 1".
std::string Cadence(const ProgressState& state, const ScrapeNeed& need) {
  const ScrapeCadence c = CadenceOf(state, need);
  return std::string(c.why) + " " + std::to_string(c.every_cycle) + " " + std::to_string(c.full);
}

TEST(ScrapeCadence, OnlyAJobAVerdictMayReadSoonIsScrapedEveryCycleInFull) {
  ScrapeNeed learned;
  learned.power_baseline = true;
  EXPECT_EQ(Cadence(Training(2), learned), "healthy 0 0");
  EXPECT_EQ(Cadence(Training(14.9), learned), "healthy 0 0") << "under a quarter of the bound";
  EXPECT_EQ(Cadence(Training(15), learned), "late 1 1") << "a quarter of the way to a stall";
  EXPECT_EQ(Cadence(Training(40, 600), learned), "healthy 0 0") << "a checkpoint's longer bound";

  EXPECT_EQ(Cadence(Training(2), {}), "learning 1 0") << "its baseline, every cycle";
  EXPECT_EQ(Cadence(Training(20), {}), "late 1 1") << "late while learning: in full";

  ProgressState stalled = Training(90);
  stalled.phase = Phase::kStalled;
  EXPECT_EQ(Cadence(stalled, learned), "stalled 1 1");

  ScrapeNeed accused = learned;
  accused.heartbeat_pending = true;
  EXPECT_EQ(Cadence(Training(2), accused), "accused 1 1");
  ScrapeNeed incident = learned;
  incident.incident_open = true;
  EXPECT_EQ(Cadence(Training(2), incident), "incident 1 1");
  ScrapeNeed tensorboard = learned;
  tensorboard.tensorboard_progress = true;
  EXPECT_EQ(Cadence(Training(2), tensorboard), "tensorboard 1 1")
      << "a sparse tb_step would look like a stall";

  ProgressState starting;
  starting.phase = Phase::kStarting;
  starting.idle_seconds = 1000;
  starting.threshold_seconds = 1800;
  EXPECT_EQ(Cadence(starting, {}), "healthy 0 0") << "a startup stall is judged without the window";
}

TEST(ScrapeCadence, ASparseJobIsScrapedOnceInEachSlotOfItsInterval) {
  EXPECT_TRUE(ScrapeDue(false, std::nullopt, 60, 1000)) << "never scraped";
  EXPECT_FALSE(ScrapeDue(false, 1200, 60, 1210));
  EXPECT_FALSE(ScrapeDue(false, 1200, 60, 1259.9));
  EXPECT_TRUE(ScrapeDue(false, 1200, 60, 1260)) << "the next slot";
  EXPECT_TRUE(ScrapeDue(true, 1200, 60, 1210)) << "every cycle";
  EXPECT_TRUE(ScrapeDue(false, 1200, 0, 1210)) << "interval 0: every cycle";
  // Shifted by its phase: half an interval here.
  EXPECT_FALSE(ScrapeDue(false, 1200, 60, 1229, 0.5));
  EXPECT_TRUE(ScrapeDue(false, 1200, 60, 1230, 0.5));
}

// Jobs that all turned healthy in one cycle, polled every 10 s with a 60-s
// interval: each cycle scrapes about a sixth of them, and every job is
// scraped once in each 60 s, never more than 70 s apart.
TEST(ScrapeCadence, JobsThatTurnedHealthyTogetherAreSpreadOverTheInterval) {
  constexpr uint32_t kJobs = 6000;
  std::vector<double> last(kJobs, 1000);
  for (double now = 1010; now <= 1600; now += 10) {
    size_t scraped = 0;
    for (uint32_t id = 0; id < kJobs; ++id) {
      if (!ScrapeDue(false, last[id], 60, now, HealthyPhase(id + 4000))) {
        ASSERT_LT(now - last[id], 60) << "job " << id;
        continue;
      }
      ASSERT_LE(now - last[id], 70) << "job " << id;
      last[id] = now;
      ++scraped;
    }
    EXPECT_NEAR(static_cast<double>(scraped), kJobs / 6.0, kJobs / 6.0 * 0.1) << "at " << now;
  }
}

}  // namespace
}  // namespace jobmon::monitor
