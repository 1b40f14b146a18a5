// Two jobs side by side (diagnose/src/compare/compare.h). Config headers come from the
// programs that print them: the fake trainer's own header formatter, the
// real PyTorch/tqdm logs in tests/fixtures/real, and lines built from the
// frameworks' print formats (named at each test). Metrics come from two
// CannedPromSources.

#include "compare/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "canned_prom_source.h"
#include "log_lines.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in) << relative;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- config --------------------------------------------------------------

std::string FakeTrainerHeader(int64_t steps, int64_t checkpoint_every, const std::string& job) {
  fake_trainer::Scenario scenario;
  scenario.steps = steps;
  scenario.checkpoint_every = checkpoint_every;
  fake_trainer::RankInfo rank;
  rank.world_size = 2;
  rank.job_id = job;
  rank.nodelist = "node[1-2]";
  rank.host = "node1";
  return Join(fake_trainer::HeaderLines(scenario, rank, 1.7e9));
}

// contrib/fake-trainer/src/log_lines.cc HeaderLines: the job script's env
// lines, PASSTHROUGH_ARGS and MaxText's "Config param k: v".
TEST(CompareConfig, FakeTrainerHeaderParsed) {
  auto config = ParseConfigHeader(FakeTrainerHeader(100, 20, "41"));
  EXPECT_EQ(config["NNODES"].value, "2");
  EXPECT_EQ(config["NODE_LIST"].value, "node[1-2]");
  EXPECT_EQ(config["RAY"].value, "0");
  EXPECT_EQ(config["steps"].value, "100");
  EXPECT_EQ(config["steps"].source, "PASSTHROUGH_ARGS");
  EXPECT_EQ(config["per_device_batch_size"].value, "2");
  EXPECT_EQ(config["checkpoint_period"].value, "20");
  EXPECT_EQ(config["checkpoint_period"].source, "Config param");
  EXPECT_EQ(config["async_checkpointing"].value, "false");
  EXPECT_FALSE(config.contains("PASSTHROUGH_ARGS")) << "split into its k=v tokens";
}

TEST(CompareConfig, DifferencesFromTwoFakeTrainerHeaders) {
  auto a = ParseConfigHeader(FakeTrainerHeader(100, 20, "41"));
  auto b = ParseConfigHeader(FakeTrainerHeader(100, 0, "42"));
  auto diffs = DiffConfig(a, b);
  std::map<std::string, std::pair<std::string, std::string>> by_key;
  for (const auto& d : diffs) by_key[d.parameter] = {d.a, d.b};
  EXPECT_EQ(by_key["checkpoint_period"], (std::pair<std::string, std::string>{"20", "(not set)"}));
  EXPECT_EQ(by_key["enable_checkpointing"].first, "true");    // PASSTHROUGH_ARGS wins
  EXPECT_EQ(by_key["enable_checkpointing"].second, "False");  // Config param only
  EXPECT_FALSE(by_key.contains("SLURM_JOB_ID")) << "the job's identity is no config";
  EXPECT_FALSE(by_key.contains("steps"));
  EXPECT_TRUE(DiffConfig(a, ParseConfigHeader(FakeTrainerHeader(100, 20, "43"))).empty());
  // The same setting from a shell script and from Python's print.
  EXPECT_TRUE(DiffConfig(ParseConfigHeader("PASSTHROUGH_ARGS=async_checkpointing=true\n"),
                         ParseConfigHeader("Config param async_checkpointing: True\n"))
                  .empty());
}

// Real logs (tests/fixtures/real): step lines, gloo/torchrun warnings and
// tqdm bars with their postfix "k=v" are no configuration.
TEST(CompareConfig, RealLogsYieldNoFalseKeys) {
  for (const char* log : {"real/pytorch/srun-healthy.log", "real/pytorch/torchrun-healthy.log",
                          "real/pytorch/torchrun-sigkill.log", "real/tqdm/hf.log",
                          "real/tqdm/lightning.log", "real/tqdm/accelerate.log"}) {
    auto config = ParseConfigHeader(ReadFixture(log));
    std::string keys;
    for (const auto& [k, v] : config) keys += k + "=" + v.value + " ";
    EXPECT_TRUE(config.empty()) << log << ": " << keys;
  }
}

// The srun/torchrun command of tests/fixtures/real/pytorch/make_fixtures.sh
// as bash xtrace prints it; python's argparse print(args).
TEST(CompareConfig, CommandLinesAndNamespace) {
  auto config = ParseConfigHeader(
      "+ srun --kill-on-bad-exit=1 -N 2 torchrun --nnodes 2 --nproc_per_node 1 "
      "--rdzv_backend c10d --rdzv_endpoint 10.213.0.11:29500 --redirects 1 --tee 1 "
      "--log_dir /tmp/tr train_ddp.py --steps 40 --step-sleep 0.1 --verbose\n"
      "Namespace(steps=40, lr=0.01, name='a, b', dims=[1, 2])\n");
  EXPECT_EQ(config["srun --kill_on_bad_exit"].value, "1");
  EXPECT_EQ(config["srun -N"].value, "2");
  EXPECT_EQ(config["torchrun --nnodes"].value, "2") << "the inner launcher's flags";
  EXPECT_EQ(config["torchrun --rdzv_endpoint"].value, "10.213.0.11:29500");
  EXPECT_FALSE(config.contains("srun --nnodes"));
  EXPECT_EQ(config["steps"].value, "40");
  EXPECT_EQ(config["steps"].source, "train_ddp.py");
  EXPECT_EQ(config["step_sleep"].value, "0.1");
  EXPECT_EQ(config["verbose"].value, "true");
  EXPECT_EQ(config["lr"].value, "0.01");
  EXPECT_EQ(config["lr"].source, "argparse Namespace");
  EXPECT_EQ(config["name"].value, "'a, b'");
  EXPECT_EQ(config["dims"].value, "[1, 2]");

  config = ParseConfigHeader(
      "torchrun --nnodes=4 --nproc-per-node 8 train.py --lr 3e-4\n"
      "python3 -u -m torch.distributed.run --nnodes 2 train.py\n");
  EXPECT_EQ(config["torchrun --nnodes"].value, "4");
  EXPECT_EQ(config["torchrun --nproc_per_node"].value, "8");
  EXPECT_EQ(config["lr"].value, "3e-4");
}

// transformers TrainingArguments.__str__: "TrainingArguments(\n" then
// "f'{k}={v},\n'" per field, then ")"; logged by Trainer as
// "Training/evaluation parameters {args}". Lightning AttributeDict.__repr__:
// '"{k}":' padded, a tab, the value.
TEST(CompareConfig, FrameworkDumps) {
  auto config = ParseConfigHeader(
      "[INFO|trainer.py:2128] 2024-05-01 10:00:00,000 >> Training/evaluation parameters "
      "TrainingArguments(\n"
      "_n_gpu=1,\n"
      "gradient_accumulation_steps=4,\n"
      "learning_rate=5e-05,\n"
      "lr_scheduler_type=linear,\n"
      "per_device_train_batch_size=8,\n"
      ")\n"
      "\"batch_size\":   \t32\n"
      "\"hidden_dim\":   \t1024\n");
  EXPECT_EQ(config["learning_rate"].value, "5e-05");
  EXPECT_EQ(config["learning_rate"].source, "HF TrainingArguments");
  EXPECT_EQ(config["per_device_train_batch_size"].value, "8");
  EXPECT_EQ(config["gradient_accumulation_steps"].value, "4");
  EXPECT_EQ(config["batch_size"].value, "32");
  EXPECT_EQ(config["batch_size"].source, "Lightning hparams");
  EXPECT_EQ(config["hidden_dim"].value, "1024");
}

TEST(CompareConfig, RankPrefixesAndHeaderLimit) {
  auto config = ParseConfigHeader("0: NNODES=4\n[default0]:Config param steps: 9\n");
  EXPECT_EQ(config["NNODES"].value, "4");
  EXPECT_EQ(config["steps"].value, "9");
  std::string late(250, '\n');
  EXPECT_TRUE(ParseConfigHeader(late + "NNODES=4\n").empty()) << "past the header";
  EXPECT_TRUE(ParseConfigHeader("step=3 loss=0.5 lr=1e-4\n").empty())
      << "a progress line is not one lower-case assignment";
}

// ---- alignment and statistics ------------------------------------------

std::vector<StepTime> Steps(int64_t first, int64_t last, double t0, double seconds_per_step) {
  std::vector<StepTime> out;
  for (int64_t s = first; s <= last; ++s) {
    out.push_back({s, t0 + static_cast<double>(s - first) * seconds_per_step});
  }
  return out;
}

TEST(CompareAlign, OverlapSkipsWarmupAfterTheLaterStart) {
  // The reference's example: A ran 0-500, B 200-700 -> 200-500, minus warmup.
  auto overlap = OverlapSteps(Steps(0, 500, 0, 1), Steps(200, 700, 0, 1));
  ASSERT_TRUE(overlap);
  EXPECT_EQ(overlap->first_step, 210);
  EXPECT_EQ(overlap->last_step, 500);
  EXPECT_EQ(overlap->warmup_skipped, 10);
  overlap = OverlapSteps(Steps(0, 7, 0, 1), Steps(0, 30, 0, 1));
  ASSERT_TRUE(overlap);
  EXPECT_EQ(overlap->warmup_skipped, 4) << "a short overlap keeps half of itself";
  EXPECT_FALSE(OverlapSteps(Steps(0, 10, 0, 1), Steps(20, 30, 0, 1)));
  EXPECT_FALSE(OverlapSteps({}, Steps(0, 30, 0, 1)));
}

TEST(CompareSteady, PersistentGapDivergesSpikeDoesNot) {
  DiagnoseContext context;
  auto series = [](std::vector<double> values) {
    Series s{{{"host", "n1"}}, {}};
    for (size_t i = 0; i < values.size(); ++i) s.samples.push_back({double(i), values[i]});
    return std::vector<Series>{s};
  };
  auto base = SteadyStateOf(series({10, 10.5, 9.5, 10, 10.2, 9.8}), context);
  auto gap = SteadyStateOf(series({14, 14.5, 13.5, 14, 14.2, 13.8}), context);
  auto spike = SteadyStateOf(series({10, 10.5, 9.5, 34, 10.2, 9.8}), context);
  ASSERT_TRUE(base && gap && spike);
  EXPECT_NEAR(gap->mean - base->mean, 4, 1e-9);
  EXPECT_TRUE(Diverges(*base, *gap, 1, 0));
  EXPECT_FALSE(Diverges(*base, *spike, 1, 0)) << "one spike raises the noise, not the level";
  EXPECT_FALSE(Diverges(*base, *gap, 5, 0)) << "below the family's floor";
  EXPECT_FALSE(Diverges(*base, *gap, 0, 0.5)) << "below the relative floor";
  context.checkpoints.push_back({100, {2.5, 3.5}});
  auto outside = SteadyStateOf(series({10, 10.5, 9.5, 34, 10.2, 9.8}), context);
  ASSERT_TRUE(outside);
  EXPECT_EQ(outside->samples, 5u) << "the checkpoint window's sample is left out";
  EXPECT_TRUE(Diverges(*outside, *gap, 1, 0));
}

// ---- the comparison ------------------------------------------------------

constexpr double kStepSeconds = 10;
constexpr int64_t kSteps = 120;
const std::vector<std::string> kHosts = {"n1", "n2", "n3", "n4"};

DiagnoseContext JobContext(const std::string& job, double t0) {
  DiagnoseContext c;
  c.job = job;
  c.job_range = {t0, t0 + kSteps * kStepSeconds};
  c.tsdb_range = c.window = c.job_range;
  c.hosts = kHosts;
  c.steps = Steps(0, kSteps - 1, t0, kStepSeconds);
  c.scrape_interval_seconds = 5;
  c.rate_window_seconds = 60;
  c.families = {"hw_procs_running",          "hw_tcp_retransmits_total",
                "hw_gpu_power_watts",        "tb_perf_step_time_seconds",
                "hw_io_pressure_full_pct",   "hw_rdma_tx_retx_pkts_total",
                "hw_gpu_utilization_percent"};
  return c;
}

// Per host, one sample per scrape over the job: value(host index, sample index).
template <typename F>
std::vector<Series> PerHost(const DiagnoseContext& c, F value) {
  std::vector<Series> out;
  for (size_t h = 0; h < kHosts.size(); ++h) {
    Series s{{{"host", kHosts[h]}}, {}};
    size_t i = 0;
    for (double t = c.job_range.start; t <= c.job_range.end; t += c.scrape_interval_seconds, ++i) {
      s.samples.push_back({t, value(h, i)});
    }
    out.push_back(std::move(s));
  }
  return out;
}

// A healthy job: small deterministic jitter on every family; `extra_procs`
// more runnable processes on the hosts `on` says.
void Healthy(
    CannedPromSource& source, const DiagnoseContext& c, double extra_procs = 0,
    std::function<bool(size_t)> on = [](size_t) { return true; }) {
  auto jitter = [](size_t h, size_t i) { return 0.3 * std::sin(double(i) * 0.7 + double(h)); };
  source.Answer("hw_procs_running", PerHost(c, [&](size_t h, size_t i) {
                  return 24 + jitter(h, i) + (on(h) ? extra_procs : 0);
                }));
  source.Answer("hw_gpu_power_watts",
                PerHost(c, [&](size_t h, size_t i) { return 300 + 5 * jitter(h, i); }));
  source.Answer("hw_gpu_utilization_percent",
                PerHost(c, [&](size_t h, size_t i) { return 97 + jitter(h, i); }));
  source.Answer("tb_perf_step_time_seconds",
                PerHost(c, [&](size_t h, size_t i) { return 10 + 0.1 * jitter(h, i); }));
  source.Answer("hw_io_pressure_full_pct",
                PerHost(c, [&](size_t h, size_t i) { return 1 + jitter(h, i); }));
  source.Answer("hw_rdma_tx_retx_pkts_total", PerHost(c, [](size_t, size_t) { return 0.0; }));
}

void SetTcp(CannedPromSource& source, const DiagnoseContext& c, double per_second) {
  source.Answer("hw_tcp_retransmits_total", PerHost(c, [&](size_t h, size_t i) {
                  return per_second * (1 + 0.05 * std::sin(double(i + h)));
                }));
}

const MetricComparison* Row(const Comparison& c, std::string_view family) {
  for (const auto& m : c.metrics) {
    if (m.metric.find(family) != std::string::npos) return &m;
  }
  return nullptr;
}

TEST(Compare, ExtraRunnableProcessesOnEveryHostAreTheRootCause) {
  auto ca = JobContext("7879", 1000);
  auto cb = JobContext("7882", 50000);  // another day, same steps
  CannedPromSource a, b;
  Healthy(a, ca);
  Healthy(b, cb, 17);
  SetTcp(a, ca, 1);
  SetTcp(b, cb, 1);
  auto header = FakeTrainerHeader(kSteps, 0, "x");
  auto c = Compare(a, ca, b, cb, header, header);
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  EXPECT_TRUE(c.config_differences.empty());
  ASSERT_TRUE(c.overlap_first_step);
  EXPECT_EQ(*c.overlap_first_step, 10);
  EXPECT_EQ(*c.overlap_last_step, kSteps - 1);
  ASSERT_TRUE(c.range_b);
  EXPECT_DOUBLE_EQ(c.range_b->start, 50000 + 10 * kStepSeconds) << "B's own wall clock";
  ASSERT_TRUE(c.root_cause);
  EXPECT_EQ(c.root_cause->code, "procs-running");
  EXPECT_EQ(c.root_cause->family, "hw_procs_running");
  EXPECT_NEAR(*c.root_cause->value, 17, 0.5);
  EXPECT_TRUE(c.root_cause->host.empty()) << "every host, not one";
  const auto* procs = Row(c, "hw_procs_running");
  ASSERT_TRUE(procs);
  EXPECT_TRUE(procs->diverges);
  EXPECT_NE(procs->likely_cause.find("uniform"), std::string::npos) << procs->likely_cause;
  EXPECT_NE(procs->likely_cause.find("leak"), std::string::npos);
  const auto* power = Row(c, "hw_gpu_power_watts");
  ASSERT_TRUE(power);
  EXPECT_FALSE(power->diverges);
  // Counters only through rate().
  for (const auto& q : b.asked()) {
    if (q.find("_total") != std::string::npos) {
      EXPECT_NE(q.find("rate("), std::string::npos) << q;
    }
  }

  auto md = RenderComparisonMarkdown(c);
  EXPECT_NE(md.find("## Multi-Job Comparison: 7879 vs 7882"), std::string::npos);
  EXPECT_NE(md.find("### Config differences"), std::string::npos);
  EXPECT_NE(md.find("### Overlapping step range: 10 to 119"), std::string::npos);
  EXPECT_NE(md.find("| Metric | Job A | Job B | Delta | Likely cause |"), std::string::npos);
  EXPECT_NE(md.find("### Root cause"), std::string::npos);
  EXPECT_NE(md.find("procs-running"), std::string::npos);
  auto j = ComparisonToJson(c);
  EXPECT_EQ(j["root_cause"]["code"], "procs-running");
  EXPECT_EQ(j["overlap"]["first_step"], 10);
  EXPECT_EQ(j["metrics"].size(), c.metrics.size());
}

TEST(Compare, IdenticalJobsHaveNoRootCause) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  CannedPromSource a, b;
  Healthy(a, ca);
  Healthy(b, cb);
  SetTcp(a, ca, 1);
  SetTcp(b, cb, 1);
  auto c = Compare(a, ca, b, cb, "", "");
  EXPECT_FALSE(c.root_cause);
  EXPECT_FALSE(c.metrics.empty());
  for (const auto& m : c.metrics) EXPECT_FALSE(m.diverges) << m.metric;
  EXPECT_NE(c.summary.find("no metric family differs"), std::string::npos) << c.summary;
  EXPECT_TRUE(ComparisonToJson(c)["root_cause"].is_null());
}

TEST(Compare, ExtraProcessesOnOneHostArePerNode) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  CannedPromSource a, b;
  Healthy(a, ca);
  Healthy(b, cb, 12, [](size_t h) { return h == 2; });
  auto c = Compare(a, ca, b, cb, "", "");
  ASSERT_TRUE(c.root_cause);
  EXPECT_EQ(c.root_cause->code, "procs-running");
  EXPECT_EQ(c.root_cause->host, "n3");
  EXPECT_NE(Row(c, "hw_procs_running")->likely_cause.find("background processes"),
            std::string::npos);
}

// Reference step 6: TCP retransmits alone are no TGS root cause.
TEST(Compare, TcpOnlyIsNoRootCause) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  CannedPromSource a, b;
  Healthy(a, ca);
  Healthy(b, cb);
  SetTcp(a, ca, 1);
  SetTcp(b, cb, 400);
  auto c = Compare(a, ca, b, cb, "", "");
  ASSERT_TRUE(Row(c, "hw_tcp_retransmits_total"));
  EXPECT_TRUE(Row(c, "hw_tcp_retransmits_total")->diverges);
  EXPECT_FALSE(c.root_cause);
  EXPECT_NE(c.summary.find("only TCP"), std::string::npos) << c.summary;
}

// Reference step 1: a config difference accounts for the workload-bound
// families; a system family still diverging is the root cause.
TEST(Compare, ConfigDifferenceExplainsSlowerSteps) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  CannedPromSource a, b;
  Healthy(a, ca);
  // B: twice the batch, slower steps (the first rule matching a query wins).
  b.Answer("tb_perf_step_time_seconds",
           PerHost(cb, [](size_t, size_t i) { return 18 + 0.1 * std::sin(double(i)); }));
  Healthy(b, cb);
  std::string header_a = "PASSTHROUGH_ARGS=steps=120 per_device_batch_size=2\n";
  std::string header_b = "PASSTHROUGH_ARGS=steps=120 per_device_batch_size=4\n";
  auto c = Compare(a, ca, b, cb, header_a, header_b);
  ASSERT_EQ(c.config_differences.size(), 1u);
  EXPECT_EQ(c.config_differences[0].parameter, "per_device_batch_size");
  const auto* step = Row(c, "tb_perf_step_time_seconds");
  ASSERT_TRUE(step);
  EXPECT_TRUE(step->diverges);
  EXPECT_TRUE(step->explained_by_config);
  EXPECT_FALSE(c.root_cause) << "a symptom explained by config";
  EXPECT_NE(c.summary.find("accounted for by the config"), std::string::npos) << c.summary;
  auto md = RenderComparisonMarkdown(c);
  EXPECT_NE(md.find("| per_device_batch_size | 2 | 4 |"), std::string::npos) << md;
}

// Reference step 4: another observability stack (RAY=1) runs other
// processes; the job-script header says so, and the gap is no leak.
TEST(Compare, ObservabilityStackExplainsExtraProcesses) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  CannedPromSource a, b;
  Healthy(a, ca);
  Healthy(b, cb, 6);
  auto c = Compare(a, ca, b, cb, "RAY=0\n", "RAY=1\n");
  const auto* procs = Row(c, "hw_procs_running");
  ASSERT_TRUE(procs);
  EXPECT_TRUE(procs->diverges);
  EXPECT_TRUE(procs->explained_by_config);
  EXPECT_FALSE(c.root_cause);
  c = Compare(a, ca, b, cb, "RAY=0\n", "RAY=0\n");
  ASSERT_TRUE(c.root_cause) << "the same gap without the config difference";
  EXPECT_EQ(c.root_cause->code, "procs-running");
}

// Checkpoint windows are left out of the steady state (reference,
// "Checkpointing interference").
TEST(Compare, IoPressureInsideCheckpointWindowsOnlyIsNoDifference) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  for (int64_t step : {40, 80}) {
    double t = 9000 + static_cast<double>(step) * kStepSeconds;
    cb.checkpoints.push_back({step, {t, t + 3 * kStepSeconds}});
  }
  CannedPromSource a, b;
  Healthy(a, ca);
  b.Answer("hw_io_pressure_full_pct", PerHost(cb, [&](size_t, size_t i) {
             return cb.InCheckpoint(cb.job_range.start + double(i) * cb.scrape_interval_seconds)
                        ? 80.0
                        : 1.0;
           }));
  Healthy(b, cb);
  auto c = Compare(a, ca, b, cb, "", "");
  EXPECT_FALSE(Row(c, "hw_io_pressure_full_pct")->diverges);
  EXPECT_FALSE(c.root_cause);
  cb.checkpoints.clear();  // the same data, not known as checkpoints: noise, still no cause
  c = Compare(a, ca, b, cb, "", "");
  EXPECT_FALSE(c.root_cause) << "periodic spikes raise the noise, not the steady level";
}

TEST(Compare, DisjointStepsAreSaidAndFailingQueriesReported) {
  auto ca = JobContext("1", 1000);
  auto cb = JobContext("2", 9000);
  cb.steps = Steps(500, 600, 9000, kStepSeconds);
  CannedPromSource a, b;
  Healthy(a, ca);
  Healthy(b, cb);
  auto c = Compare(a, ca, b, cb, "", "");
  EXPECT_FALSE(c.overlap_first_step);
  ASSERT_FALSE(c.errors.empty());
  EXPECT_NE(c.errors.front().find("no common training steps"), std::string::npos);
  EXPECT_NE(RenderComparisonMarkdown(c).find("### Overlapping step range: none"),
            std::string::npos);
}

}  // namespace
}  // namespace jobmon::diagnose
