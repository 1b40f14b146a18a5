// Store mode's pure half against answers captured from Debian's
// VictoriaMetrics (tests/fixtures/victoria_metrics/make_fixtures.py): the
// query the monitor asks, the answer grouped back into per-host scrapes,
// and those scrapes through the unchanged window and classifier.

#include "jobmon/monitor/store_query.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "jobmon/common/metric_names.h"
#include "jobmon/diagnose/prom_json.h"
#include "jobmon/monitor/job_progress.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/monitor_config.h"
#include "jobmon/monitor/progress_tracker.h"
#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/monitor/state_store.h"
#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

constexpr double kStart = 1700000000.123;  // the fixtures' first scrape

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/victoria_metrics/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

StoreScrapes Captured(const std::string& name) {
  auto series = diagnose::ParseQueryResponse(Fixture(name));
  EXPECT_TRUE(series) << (series ? "" : series.error().message);
  return series ? GroupStoreSeries(*series) : StoreScrapes{};
}

TEST(StoreQuery, IsTheQueryTheFixturesWereCapturedWith) {
  std::string expected = Fixture("query.txt");
  while (!expected.empty() && expected.back() == '\n') expected.pop_back();
  EXPECT_EQ(StoreEvidenceQuery({101, 102}, "devc", 20), expected);
}

TEST(StoreQuery, ClusterMatcherIsEscapedOrLeftOut) {
  const std::string any = StoreEvidenceQuery({7}, "", 30);
  EXPECT_EQ(any.find("cluster="), std::string::npos);
  EXPECT_NE(any.find("slurm_job_id=~\"7\"}[30s]"), std::string::npos);
  EXPECT_NE(StoreEvidenceQuery({7}, "a\"b\\c", 30).find(R"(cluster="a\"b\\c")"), std::string::npos);
  // A fraction of a second asks for at least one whole second.
  EXPECT_NE(StoreEvidenceQuery({7}, "", 0.2).find("[1s]"), std::string::npos);
  EXPECT_NE(StoreEvidenceQuery({7}, "", 10.5).find("[11s]"), std::string::npos);
}

TEST(StoreQuery, IsTheTensorBoardStepQueryTheFixtureWasCapturedWith) {
  std::string expected = Fixture("query_tb_step.txt");
  while (!expected.empty() && expected.back() == '\n') expected.pop_back();
  EXPECT_EQ(StoreEvidenceQuery({101, 102}, "devc", 30, StoreFamilies::kTensorBoardStep), expected);
}

TEST(StoreQuery, TheTensorBoardStepAnswerGivesEachJobsNewestStepAndNothingElse) {
  StoreScrapes scrapes = Captured("tb_step.json");
  ASSERT_EQ(scrapes.size(), 2u);
  for (const auto& [job, hosts] : scrapes) {
    for (const auto& [host, list] : hosts) {
      for (const StoreScrape& scrape : list) {
        for (const Sample& sample : scrape.samples.samples) {
          EXPECT_EQ(sample.name, metric_names::kTbStep) << job << " " << host;
        }
      }
    }
  }
  // Job 102: both hosts at step 5 up to the last scrape (kStart + 18).
  auto newest = NewestTensorBoardStep(scrapes.at(102), kStart - 1);
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->value, 5);
  EXPECT_NEAR(newest->t, kStart + 18, 1e-6);
  // Only scrapes after `since` count: from kStart + 3 the newest is the same,
  // after the last scrape there is none.
  auto later = NewestTensorBoardStep(scrapes.at(102), kStart + 3);
  ASSERT_TRUE(later);
  EXPECT_NEAR(later->t, kStart + 18, 1e-6);
  EXPECT_FALSE(NewestTensorBoardStep(scrapes.at(102), kStart + 18.5));
  // An answer of only the evidence families has no step to give.
  StoreScrapes evidence = Captured("raw_samples.json");
  std::map<std::string, std::vector<StoreScrape>> without_steps;
  for (const auto& [host, list] : evidence.at(102)) {
    for (StoreScrape scrape : list) {
      std::erase_if(scrape.samples.samples,
                    [](const Sample& s) { return s.name == metric_names::kTbStep; });
      without_steps[host].push_back(scrape);
    }
  }
  EXPECT_FALSE(NewestTensorBoardStep(without_steps, kStart - 1));
}

// Which jobs' evidence store mode asks for: judged from the progress states
// a real tracker gives.
TEST(StoreQuery, EvidenceIsAskedForOnlyWhileAVerdictNeedsIt) {
  ProgressTracker tracker(test_support::Policy(), kStart);
  // Starting, and stalled before a first step (hang/startup needs no window).
  EXPECT_FALSE(NeedsStoreEvidence(tracker.Evaluate(kStart + 10), false));
  ProgressState startup = tracker.Evaluate(kStart + 1000);
  ASSERT_EQ(startup.phase, Phase::kStalled);
  EXPECT_FALSE(NeedsStoreEvidence(startup, false));
  // A heartbeat accusation is judged from the window whatever the phase.
  EXPECT_TRUE(NeedsStoreEvidence(tracker.Evaluate(kStart + 10), true));
  for (int step = 1; step <= 20; ++step) tracker.OnStep(step, kStart + step);
  ProgressState training = tracker.Evaluate(kStart + 21);
  ASSERT_EQ(training.phase, Phase::kTraining);
  EXPECT_FALSE(NeedsStoreEvidence(training, false));
  ProgressState stalled = tracker.Evaluate(kStart + 20 + 60);
  ASSERT_EQ(stalled.phase, Phase::kStalled);
  EXPECT_TRUE(NeedsStoreEvidence(stalled, false));
}

TEST(StoreQuery, GroupsRawSamplesIntoScrapesPerJobAndHost) {
  StoreScrapes scrapes = Captured("raw_samples.json");
  ASSERT_EQ(scrapes.size(), 2u);  // job 101 of cluster "other" was not asked for
  const auto& job101 = scrapes.at(101);
  ASSERT_EQ(job101.size(), 2u);
  const auto& node1 = job101.at("node1");
  ASSERT_EQ(node1.size(), 10u);
  for (size_t i = 0; i < node1.size(); ++i) {
    EXPECT_NEAR(node1[i].t, kStart + 2.0 * static_cast<double>(i), 1e-6);
    EXPECT_TRUE(node1[i].ok);
    // power, utilization, tb_step; never hw_mem_available_bytes (not asked)
    EXPECT_EQ(node1[i].samples.samples.size(), 3u);
  }
  // Each point carries only what MetricWindow reads (gpu, type), not the
  // remote_write labels its series had.
  for (const Sample& sample : node1.front().samples.samples) {
    EXPECT_FALSE(sample.labels.count("slurm_job_id")) << sample.name;
    EXPECT_FALSE(sample.labels.count("instance")) << sample.name;
    if (sample.name == "hw_gpu_power_watts") {
      EXPECT_TRUE(sample.labels.count("gpu"));
    }
  }
  const auto& node2 = job101.at("node2");
  ASSERT_EQ(node2.size(), 10u);
  EXPECT_FALSE(node2.back().ok);  // up 0 at the last scrape
  EXPECT_TRUE(node2.back().samples.samples.empty());
  // Job 102's node1 has two GPUs: both in each scrape.
  const auto& two_gpus = scrapes.at(102).at("node1");
  ASSERT_EQ(two_gpus.size(), 10u);
  int power = 0;
  for (const Sample& s : two_gpus.back().samples.samples) power += s.name == "hw_gpu_power_watts";
  EXPECT_EQ(power, 2);
}

// Store mode reads what the job's processes wait on (hw_job_process*) as
// scrape mode does: the store's answer keeps the labels the window reads.
TEST(StoreQuery, WhatTheJobsProcessesWaitOnComesFromTheStoreToo) {
  StoreScrapes scrapes = Captured("raw_samples.json");
  MetricWindow window;
  FeedStoreAnswer(window, scrapes.at(102), 0);
  const double at = kStart + 18;
  StallEvidence evidence = window.Evidence(at, kStart, kStart + 10, 30);
  auto node2 = std::find_if(evidence.hosts.begin(), evidence.hosts.end(),
                            [](const HostEvidence& h) { return h.host == "node2"; });
  ASSERT_NE(node2, evidence.hosts.end());
  ASSERT_EQ(node2->job_processes.size(), 2u);
  const ProcessWait& blocked = node2->job_processes[0];
  EXPECT_EQ(blocked.pid, "4242");
  EXPECT_EQ(blocked.comm, "python3");
  EXPECT_EQ(blocked.state, "S");
  EXPECT_EQ(blocked.wchan, "pipe_read");
  EXPECT_EQ(blocked.task, "1");
  EXPECT_EQ(blocked.threads.at("S"), 7);
  EXPECT_EQ(blocked.thread_wchans.at("futex_wait_queue"), 6);
  EXPECT_EQ(node2->job_processes[1].wchan, "futex_wait_queue");
}

TEST(StoreQuery, EmptyAnswerAndErrorAnswer) {
  EXPECT_TRUE(Captured("raw_samples_empty.json").empty());
  auto error = diagnose::ParseQueryResponse(Fixture("error_bad_query.json"));
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("unexpected token"), std::string::npos);
}

TEST(StoreQuery, SkipsSeriesWithoutJobOrHost) {
  diagnose::Series no_host{{{"__name__", "up"}, {"slurm_job_id", "5"}}, {{1, 1}}};
  diagnose::Series bad_job{{{"__name__", "up"}, {"slurm_job_id", "5x"}, {"host", "n"}}, {{1, 1}}};
  diagnose::Series good{{{"__name__", "up"}, {"slurm_job_id", "5"}, {"host", "n"}}, {{1, 1}}};
  StoreScrapes scrapes = GroupStoreSeries({no_host, bad_job, good});
  ASSERT_EQ(scrapes.size(), 1u);
  EXPECT_EQ(scrapes.at(5).at("n").size(), 1u);
}

// One series of job 7 as the store answers it: `labels` and __name__, one
// point per time in `times`.
diagnose::Series JobSeries(const std::string& name, diagnose::Labels labels,
                           const std::vector<double>& times, double value = 1) {
  labels["__name__"] = name;
  labels[store_labels::kJobId] = "7";
  diagnose::Series s{std::move(labels), {}};
  for (double t : times) s.samples.push_back({t, value});
  return s;
}

// Store mode took a job's series by their slurm_job_id alone, a label the
// job's own Prometheus writes: another user's series claiming the job (a
// forged advancing tb_step, forged evidence) counted as the job's. They
// count now only with Slurm's user for the job and on its own nodes.
TEST(StoreQuery, SeriesOfAnotherUserOrHostClaimingTheJobDoNotCount) {
  const StoreScopes scopes = {{7, {"alice", {"node1", "node2"}}}};
  std::vector<diagnose::Series> answer = {
      JobSeries(metric_names::kTbStep, {{"host", "node1"}, {"user", "alice"}}, {kStart}, 10),
      JobSeries(metric_names::kTbStep, {{"host", "node1"}, {"user", "mallory"}}, {kStart + 1}, 99),
      JobSeries(metric_names::kTbStep, {{"host", "evil"}, {"user", "alice"}}, {kStart + 2}, 99),
  };
  StoreScrapes unchecked = GroupStoreSeries(answer);
  EXPECT_EQ(unchecked[7].size(), 2u) << "without scopes, both hosts count";
  StoreScrapes scoped = GroupStoreSeries(answer, {}, &scopes);
  ASSERT_EQ(scoped[7].size(), 1u);
  ASSERT_TRUE(scoped[7].count("node1"));
  ASSERT_EQ(scoped[7]["node1"].size(), 1u) << "mallory's sample at kStart + 1 is not the job's";
  EXPECT_EQ(scoped[7]["node1"][0].t, kStart);
}

TEST(StoreQuery, FreshGpuLabelsInEachAnswerDoNotGrowTheJobsWindow) {
  // The job's Prometheus writes 1000 GPU labels never seen before each
  // cycle, for a host of the job's: the grouping copies a host's first 64
  // GPUs, and the window keeps the first 64 it saw.
  const size_t cap = WindowLimits{}.max_gpus_per_host;
  MetricWindow window;
  for (int cycle = 0; cycle < 30; ++cycle) {
    const double t = kStart + 10.0 * cycle;
    std::vector<diagnose::Series> answer = {JobSeries("up", {{"host", "node1"}}, {t})};
    for (int k = 0; k < 1000; ++k) {
      const std::string gpu = "c" + std::to_string(cycle) + "-" + std::to_string(k);
      answer.push_back(
          JobSeries(metric_names::kGpuPowerWatts, {{"host", "node1"}, {"gpu", gpu}}, {t}, 700));
    }
    StoreScrapes scrapes = GroupStoreSeries(answer);
    ASSERT_EQ(scrapes.at(7).at("node1").size(), 1u);
    EXPECT_EQ(scrapes.at(7).at("node1")[0].samples.samples.size(), cap);
    FeedStoreAnswer(window, scrapes.at(7), t - 10);
  }
  EXPECT_EQ(window.series_count(), cap);
}

TEST(StoreQuery, InventedHostsInAnAnswerStopAtTheJobsCap) {
  std::vector<diagnose::Series> answer;
  answer.push_back(JobSeries("up", {{"host", std::string(1000, 'h')}}, {kStart}));
  for (int host = 0; host < 5000; ++host) {
    answer.push_back(JobSeries("up", {{"host", "n" + std::to_string(host)}}, {kStart}));
  }
  diagnose::Series other = JobSeries("up", {{"host", "n0"}}, {kStart});
  other.labels[store_labels::kJobId] = "8";  // the cap is each job's
  answer.push_back(other);
  StoreScrapes scrapes = GroupStoreSeries(answer);
  EXPECT_EQ(scrapes.at(7).size(), WindowLimits{}.max_hosts);
  EXPECT_FALSE(scrapes.at(7).count(std::string(1000, 'h')));
  EXPECT_EQ(scrapes.at(8).size(), 1u);
}

// The window fed from the store classifies as it does from scrapes: job 102
// (both hosts up, 300 W while training, then 120 W at 100% utilization) is
// a busy-wait; job 101 (node2 down at the end) a node death naming node2.
StallClassification ClassifyJob(const StoreScrapes& scrapes, uint32_t job) {
  MetricWindow window;
  for (const auto& [host, list] : scrapes.at(job)) {
    for (const StoreScrape& s : list) {
      if (s.ok) {
        window.AddScrape(host, s.t, s.samples);
      } else {
        window.AddFailedScrape(host, s.t);
      }
    }
  }
  return ClassifyStall(window.Evidence(kStart + 18, kStart, kStart + 10.1, 5));
}

TEST(StoreQuery, FeedsTheWindowTheClassifiersRead) {
  StoreScrapes scrapes = Captured("raw_samples.json");
  StallClassification busy = ClassifyJob(scrapes, 102);
  EXPECT_EQ(busy.klass, "hang/busy-wait") << busy.summary;
  StallClassification death = ClassifyJob(scrapes, 101);
  EXPECT_EQ(death.klass, "hang/node-death") << death.summary;
  EXPECT_EQ(death.hosts, std::vector<std::string>{"node2"});
}

// The restart case: the daemon comes back with the job's progress from its
// state store (last step 39, no first-step time) and an empty window, and
// back-fills it from the store while the newest training scrapes are only
// partly written there (utilization in, power not yet: remote_write sends
// a scrape in several batches). The power arriving later must still count,
// so the stall is judged against each host's training baseline.
StoreScrape Scrape(double t, double power, double utilization, bool with_power = true) {
  StoreScrape s;
  s.t = t;
  auto gpu_sample = [&](const char* name, double value) {
    Sample sample;
    sample.name = name;
    sample.labels = {{"gpu", "0"}};
    sample.value = value;
    s.samples.samples.push_back(sample);
  };
  gpu_sample(metric_names::kGpuUtilizationPercent, utilization);
  if (with_power) gpu_sample(metric_names::kGpuPowerWatts, power);
  return s;
}

// Each host's scrapes from `from` to `to` (1 s apart; none before kStart + 5,
// when the job's Prometheus started, after the job's first step) as the
// store has them when asked: training (300 W) up to kStart + 12, then the
// spin (100% utilization at 120 W); power only up to `power_until`.
std::map<std::string, std::vector<StoreScrape>> StoreAt(double from, double to,
                                                        double power_until) {
  std::map<std::string, std::vector<StoreScrape>> hosts;
  for (const std::string host : {"node1", "node2"}) {
    for (double t = std::max(from, kStart + 5); t <= to + 1e-6; t += 1) {
      const bool training = t <= kStart + 12;
      hosts[host].push_back(
          Scrape(t, training ? 300 : 120, training ? 95 : 100, t <= power_until + 1e-6));
    }
  }
  return hosts;
}

TEST(StoreRestart, LateSamplesOfABackFilledScrapeStillMakeTheTrainingBaseline) {
  test_support::TempDir dir;
  const double window_seconds = 600, stale_after = 12;
  {  // before the restart: the last step read, the stall not reached
    auto store = StateStore::Open((dir.path / "state.db").string());
    ASSERT_TRUE(store) << store.error().message;
    JobRecord job;
    job.job_id = 2;
    job.first_seen = kStart;
    ASSERT_TRUE((*store)->UpsertJob(job));
    ProgressRecord saved;
    saved.job_id = 2;
    saved.last_step = 39;
    saved.last_step_time = kStart + 12.5;
    saved.median_interval = 0.3;
    saved.p99_interval = 0.35;
    saved.phase = "training";
    saved.updated_at = kStart + 12.5;
    ASSERT_TRUE((*store)->SaveProgress(saved));
  }
  auto store = StateStore::Open((dir.path / "state.db").string());
  ASSERT_TRUE(store);
  auto record = (*store)->GetProgress(2);
  ASSERT_TRUE(record && *record);
  JobProgress progress(2, (dir.path / "absent.log").string(), test_support::Policy(), kStart);
  progress.Restore(**record);
  ASSERT_FALSE(progress.first_step_time());  // a restart does not know it
  // Judged only once its log was read (here: none written yet), from then.
  ASSERT_TRUE(progress.Evaluate(kStart + 14).blind);
  ASSERT_TRUE(progress.Poll(kStart + 14).ok());

  MetricWindow window(window_seconds);
  // The back-fill at kStart + 14: power only up to kStart + 8 yet.
  double now = kStart + 14;
  EXPECT_EQ(
      FeedStoreAnswer(window, StoreAt(kStart + 5, kStart + 13, kStart + 8), now - window_seconds),
      18u);
  // Then one steady answer a second, over the span since the last one and
  // stale_after more, complete up to 2 s before it was asked.
  for (double asked = now + 1; asked <= kStart + 30 + 1e-6; asked += 1) {
    const double since = asked - (1 + stale_after);
    FeedStoreAnswer(window, StoreAt(std::ceil(since - kStart) + kStart, asked - 1, asked - 3),
                    since);
    now = asked;
  }
  // Every sample once, however often it was answered: per host utilization
  // from kStart + 5 to + 29, power to + 27 (the last answer's).
  EXPECT_EQ(window.point_count(), 2u * ((29 - 5 + 1) + (27 - 5 + 1)));

  const ProgressState state = progress.Evaluate(now);
  ASSERT_EQ(state.phase, Phase::kStalled);
  ASSERT_TRUE(state.last_step_time);
  // The monitor's training span after a restart: the window up to the last step.
  const double until = *state.last_step_time;
  const double from = progress.first_step_time().value_or(until - window_seconds);
  const StallEvidence evidence = window.Evidence(now, from, until, stale_after);
  ASSERT_EQ(evidence.hosts.size(), 2u);
  for (const HostEvidence& host : evidence.hosts) {
    ASSERT_TRUE(host.baseline_power) << host.host;
    EXPECT_DOUBLE_EQ(*host.baseline_power, 300) << host.host;
  }
  const StallClassification c = ClassifyStall(evidence);
  EXPECT_EQ(c.klass, "hang/busy-wait") << c.summary;
  for (const std::string& line : c.evidence) {
    EXPECT_NE(line.find("of its training baseline 300 W"), std::string::npos) << line;
  }
}

TEST(StoreModeConfig, KeysAndTheirChecks) {
  auto config = ParseMonitorConfig(
      "[monitor]\ncluster = \"c1\"\nevidence = \"store\"\nstore_url = \"http://10.1.0.1:8428\"\n"
      "store_timeout = \"3s\"\nstore_bearer_token_secret = \"vm\"\n");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(config->StoreMode());
  EXPECT_EQ(config->store_url, "http://10.1.0.1:8428");
  EXPECT_EQ(config->store_timeout, 3);
  EXPECT_EQ(config->StoreCluster(), "c1");  // unset: the monitor's cluster
  EXPECT_EQ(config->store_bearer_token_secret, "vm");
  EXPECT_TRUE(config->store_bearer_token.empty());  // resolved by the daemon, never from the file
  auto any = ParseMonitorConfig("[monitor]\nstore_cluster = \"\"\n");
  ASSERT_TRUE(any);
  EXPECT_EQ(any->StoreCluster(), "");
  EXPECT_FALSE(any->StoreMode());
  EXPECT_FALSE(ParseMonitorConfig("[monitor]\nevidence = \"both\"\n"));
  EXPECT_FALSE(ParseMonitorConfig("[monitor]\nstore_url = \"ftp://x\"\n"));
  auto creds = ParseMonitorConfig("[monitor]\nstore_url = \"http://u:secretpw@h:8428\"\n");
  ASSERT_FALSE(creds);
  EXPECT_EQ(creds.error().message.find("secretpw"), std::string::npos);
  EXPECT_FALSE(ParseMonitorConfig("[monitor]\nstore_basic_user = \"u\"\n"));
  EXPECT_FALSE(ParseMonitorConfig("[monitor]\nstore_token = \"x\"\n"));  // unknown key
}

}  // namespace
}  // namespace jobmon::monitor
