#include "jobmon/triage/step_lines.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "jobmon/triage/step_series.h"
#include "line_walk_patterns.h"

namespace jobmon::triage {
namespace {

bool SameSample(const std::optional<StepSample>& a, const std::optional<StepSample>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return a->step == b->step && a->seconds == b->seconds && a->total_steps == b->total_steps &&
         a->timestamp == b->timestamp && a->epoch == b->epoch && a->epochs == b->epochs &&
         a->nested == b->nested;
}

// A step line's sample does not depend on its srun label's number: the scan
// reads a rank's copy of the line before it ("0: X", then "1: X") once
// (chunk_reading.cc). Every corpus line that has a label, with each of the
// same length, and each probe, through every profile.
TEST(StepLines, ASampleDoesNotDependOnItsLabelsNumber) {
  std::vector<std::string> texts = {"completed step: 7, seconds: 1.5",
                                    " iteration       10/     100 | x",
                                    "step:  4  loss:  2.1",
                                    "Epoch 2:  50%|##   | 17/34 [00:05<00:05, 3.1it/s]",
                                    "17/60 [00:17<00:43,  1.02s/it]",
                                    "[Rank 0] step=7, skipped=0",
                                    "steps: 10 loss: 2.0",
                                    "step 3 loss 2.5",
                                    "0: step 9",
                                    "Epoch [2/3], Step [17/60], Loss: 1.0",
                                    "logging_writer.py:48] [12] loss=2.0"};
  size_t labelled = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(JOBMON_FIXTURES)) {
    if (!entry.is_regular_file() || entry.file_size() > (4 << 20)) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      const auto [task, rest] = SplitTaskLabel(line);
      if (!task) continue;
      ++labelled;
      texts.emplace_back(rest);
    }
  }
  ASSERT_GT(labelled, 1000u);
  for (const std::string& text : texts) {
    for (const auto& [a, b] :
         {std::pair{"0: ", "7: "}, {"10: ", "99: "}, {"  3: ", "  1: "}, {"  3: ", " 12: "}}) {
      for (int p = 0; p < kStepProfileCount; ++p) {
        const auto profile = static_cast<StepProfile>(p);
        EXPECT_TRUE(SameSample(ParseStep(profile, a + text), ParseStep(profile, b + text)))
            << "profile " << p << " on: " << a << text;
      }
      // The generic prefilter's confirmation, copied with the samples.
      EXPECT_EQ(GenericStepKeyword(a + text), GenericStepKeyword(b + text)) << a << text;
    }
  }
}

// The scan parses into its sample vector (ParseStepInto): the same sample
// as ParseStep, on every fixture line and probe, through every profile.
TEST(StepLines, ParsingInPlaceReadsAsParsingApart) {
  std::vector<std::string> texts = {
      "completed step: 7, seconds: 1.5",      "0: completed step: 8, seconds: nan",
      "Last completed step: 99 of steps=200", "completed step: -3",
      " iteration       10/     100 | x",     "step 3 loss 2.5"};
  for (const auto& entry : std::filesystem::recursive_directory_iterator(JOBMON_FIXTURES)) {
    if (!entry.is_regular_file() || entry.file_size() > (4 << 20)) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) texts.push_back(line);
  }
  size_t parsed = 0;
  for (const std::string& text : texts) {
    for (int p = 0; p < kStepProfileCount; ++p) {
      const auto profile = static_cast<StepProfile>(p);
      const std::optional<StepSample> apart = ParseStep(profile, text);
      StepSample in_place;
      const bool read = ParseStepInto(profile, text, in_place);
      ASSERT_EQ(read, apart.has_value()) << "profile " << p << " on: " << text;
      if (read) {
        ++parsed;
        EXPECT_TRUE(SameSample(in_place, apart)) << "profile " << p << " on: " << text;
      }
    }
  }
  EXPECT_GT(parsed, 1000u);
}

TEST(StepLines, MaxText) {
  auto s = ParseMaxTextStep(
      "3: completed step: 316, seconds: 12.345, TFLOP/s/device: 451.2, MFU: 34.51%, loss: 2.0");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 316);
  EXPECT_DOUBLE_EQ(*s->seconds, 12.345);
  EXPECT_FALSE(ParseMaxTextStep("completed step: x, seconds: 1"));
  EXPECT_FALSE(ParseMaxTextStep("completed step: -3, seconds: 1"));
  EXPECT_FALSE(ParseMaxTextStep("completed step: 4, seconds: nan")->seconds);
  // The fake trainer's JOB SUMMARY (contrib/fake-trainer/src/log_lines.cc).
  EXPECT_FALSE(ParseMaxTextStep("0: Last completed step: 99 of steps=200"));
}

// The step and seconds read exactly what std::from_chars reads (step_lines.cc
// computes the short forms itself): bit for bit, on written numbers of every
// length around the 15- and 18-digit edges, with exponents, signs and odd ends.
TEST(StepLines, NumbersReadAsFromCharsReadsThem) {
  std::mt19937_64 random(20261130);
  std::vector<std::string> numbers = {"0",
                                      "-0",
                                      "0.0",
                                      "-0.0",
                                      "1.",
                                      ".5",
                                      "1.5e3",
                                      "2E-2",
                                      "1e",
                                      "07.50",
                                      "123456789012345",
                                      "1234567890123456",
                                      "0.000000000000001",
                                      "9.99999999999999",
                                      "99999999999999999",
                                      "999999999999999999",
                                      "9999999999999999999",
                                      "12345678901234567890",
                                      "1.5x",
                                      "3.25,",
                                      "4.",
                                      "inf",
                                      "nan"};
  for (int n = 0; n < 20000; ++n) {
    std::string whole = std::to_string(random() % 10000000000000000000ull);
    whole.resize(1 + random() % whole.size());
    std::string fraction = std::to_string(random());
    fraction.resize(random() % 20);
    numbers.push_back((random() % 4 == 0 ? "-" : "") + whole +
                      (fraction.empty() ? "" : "." + fraction));
  }
  for (const std::string& number : numbers) {
    const std::string line = "completed step: " + number + ", seconds: " + number + ", loss: 1";
    const auto sample = ParseMaxTextStep(line);
    int64_t step = 0;
    const auto [step_end, step_ec] =
        std::from_chars(number.data(), number.data() + number.size(), step);
    if (step_ec != std::errc() || step < 0) {
      EXPECT_FALSE(sample) << line;
      continue;
    }
    ASSERT_TRUE(sample) << line;
    EXPECT_EQ(sample->step, step) << line;
    double seconds = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), seconds);
    if (ec != std::errc() || !std::isfinite(seconds) || seconds < 0) {
      EXPECT_FALSE(sample->seconds) << line;
      continue;
    }
    ASSERT_TRUE(sample->seconds) << line;
    EXPECT_EQ(std::bit_cast<uint64_t>(*sample->seconds), std::bit_cast<uint64_t>(seconds))
        << line << ": " << *sample->seconds << " against " << seconds;
  }
}

TEST(StepLines, MegatronIsOneBased) {
  auto s = ParseMegatronStep(
      " [2024-01-01 12:00:00] iteration      100/  500000 | consumed samples: 102400 | elapsed "
      "time "
      "per iteration (ms): 1234.5 | learning rate: 3.0E-04 |");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 99);
  EXPECT_EQ(*s->total_steps, 500000);
  EXPECT_DOUBLE_EQ(*s->seconds, 1.2345);
  EXPECT_DOUBLE_EQ(*s->timestamp, 1704110400.0);
  // A non-positive total is no iteration line (fuzz_step_lines: the filter
  // then turned "1/-11" into step -11).
  EXPECT_FALSE(ParseMegatronStep(" iteration        1/-11-66 10:00:03]"));
  EXPECT_FALSE(ParseMegatronStep(" iteration        1/0 |"));
}

TEST(StepLines, TorchTitanTakesTimeFromTimestamps) {
  auto s = ParseTorchTitanStep(
      "[rank0]:[titan] 2025-01-01 12:00:00,250 - root - INFO - step:  10  loss:  7.1234  memory: "
      "30.12GiB(38.05%)  tps: 3,456");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 10);
  EXPECT_FALSE(s->seconds);
  EXPECT_DOUBLE_EQ(*s->timestamp, 1735732800.25);
}

TEST(StepLines, TqdmLastUpdateOfACarriageReturnLine) {
  auto s = ParseTqdmStep(
      " 1%|   | 1/1000 [00:01<16:40,  1.00s/it]\r 2%|   | 2/1000 [00:02<16:39,  2.50it/s]");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 1);
  EXPECT_EQ(*s->total_steps, 1000);
  EXPECT_DOUBLE_EQ(*s->seconds, 0.4);
  EXPECT_FALSE(ParseTqdmStep("progress 5/10 done"));
}

TEST(StepLines, TqdmReadsNestedBarsAsNestedAndSkipsOneItemAndEvaluationBars) {
  // tqdm 4.64 output captured in tests/fixtures/real/tqdm/hf.log: the nested
  // bar is followed by ESC[A (tqdm moveto), the main bar comes back after it.
  // A nested bar is read, marked nested: StepFilter decides whether it is an
  // epoch's inner bar or an evaluation under the training bar.
  EXPECT_FALSE(ParseTqdmStep("\r  0%|          | 0/4 [00:00<?, ?it/s]\x1b[A"));
  auto nested = ParseTqdmStep("\r100%|##########| 4/4 [00:00<00:00, 36.91it/s]\x1b[A");
  ASSERT_TRUE(nested);
  EXPECT_TRUE(nested->nested);
  EXPECT_EQ(nested->step, 3);
  auto back = ParseTqdmStep(
      "\r                     \x1b[A\r 75%|#######5  | 15/20 [00:00<00:00, 29.33it/s]\r      "
      "   \r{'loss': 0.1333, 'grad_norm': 1.5, 'learning_rate': 1.25e-05, 'epoch': 0.75}");
  ASSERT_TRUE(back) << "the bar before tqdm.write's cleared line and the dict counts";
  EXPECT_EQ(back->step, 14);
  EXPECT_EQ(*back->total_steps, 20);
  // A checkpoint writer's single-item bar, not nested.
  EXPECT_FALSE(ParseTqdmStep("Saving checkpoint: 100%|##########| 1/1 [00:02<00:00,  2.01s/it]"));
  EXPECT_FALSE(ParseTqdmStep("shards: 100%|##########| 1/1 [00:02<00:00,  2.01s/it]"));
  EXPECT_FALSE(ParseTqdmStep("Evaluating:  40%|####  | 8/20 [00:02<00:03,  4.01it/s]"));
  EXPECT_FALSE(ParseTqdmStep("Epoch 0:  12%|#  | 1/8 [00:00<00:00, 48.42it/s]"))
      << "Lightning's bar is the lightning profile's";
  // accelerate/diffusers: desc="Steps", set_postfix(step_loss=..., lr=...).
  auto steps = ParseTqdmStep(
      "\rSteps:  42%|####1     | 5/12 [00:00<00:00, 48.46it/s, lr=0.0001, step_loss=0.2] ");
  ASSERT_TRUE(steps);
  EXPECT_EQ(steps->step, 4);
  EXPECT_NEAR(*steps->seconds, 1 / 48.46, 1e-9);
}

TEST(StepLines, HfTrainerLogDictCarriesNoStep) {
  // trainer_callback.py ProgressCallback.on_log: training_bar.write(str(logs)).
  std::string dict = "{'loss': 0.4, 'grad_norm': 1.5, 'learning_rate': 3.75e-05, 'epoch': 0.25}";
  EXPECT_FALSE(DetectStep(dict));
}

TEST(StepLines, LightningBarCountsAcrossEpochs) {
  // TQDMProgressBar BAR_FORMAT with desc "Epoch {current_epoch}" and the
  // v_num/loss postfix (tests/fixtures/real/tqdm/lightning.log).
  auto e0 = ParseLightningStep(
      "\rEpoch 0:  12%|#2        | 1/8 [00:00<00:00, 48.42it/s]\rEpoch 0:  25%|##5       | 2/8 "
      "[00:00<00:00, 47.53it/s, v_num=0, loss=0.500]");
  ASSERT_TRUE(e0);
  EXPECT_EQ(e0->step, 1);
  EXPECT_NEAR(*e0->seconds, 1 / 47.53, 1e-9);
  auto e1 = ParseLightningStep("Epoch 1:  38%|###7      | 3/8 [00:00<00:00, 48.35it/s, v_num=0]");
  ASSERT_TRUE(e1);
  EXPECT_EQ(e1->step, 8 + 2) << "the bar restarts every epoch";
  EXPECT_FALSE(ParseLightningStep("Epoch 1:   0%|          | 0/8 [00:00<?, ?it/s, v_num=0]"));
  // Junk whose epoch x batches overflows is not a step (fuzz_step_lines
  // found it: tests/fuzz/regressions/steps-lightning-epoch-overflow).
  EXPECT_FALSE(ParseLightningStep("Epoch 4611686018427387904:  50%|#  | 1/4 [00:00<00:00, 1it/s]"));
  EXPECT_FALSE(ParseLightningStep(
      "\rValidation DataLoader 0:  67%|######6   | 2/3 [00:00<00:00, 36.53it/s]\x1b[A"));
  // NeMo MegatronProgressBar: bar_format "{desc} {n_fmt}/{total_fmt}{postfix}".
  auto nemo = ParseLightningStep("Epoch 0 10/100, reduced_train_loss=2.31, global_step=9");
  ASSERT_TRUE(nemo);
  EXPECT_EQ(nemo->step, 9);
  EXPECT_EQ(DetectStep("Epoch 2:  50%|#####     | 4/8 [00:01<00:01, 3.00it/s, v_num=1]")->profile,
            StepProfile::kLightning);
}

TEST(StepLines, DeepSpeed) {
  // deepspeed/runtime/pipe/engine.py train_batch.
  auto pipe = ParseDeepSpeedStep("steps: 20 loss: 2.3456 iter time (s): 0.512 samples/sec: 62.500");
  ASSERT_TRUE(pipe);
  EXPECT_EQ(pipe->step, 19);
  EXPECT_DOUBLE_EQ(*pipe->seconds, 0.512);
  // deepspeed/runtime/engine.py _report_progress via log_dist, logger format
  // "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s".
  auto engine = ParseDeepSpeedStep(
      "[2025-02-21 12:00:05,250] [INFO] [logging.py:128:log_dist] [Rank 0] step=10, skipped=0, "
      "lr=[5e-05], mom=[(0.9, 0.999)]");
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine->step, 9);
  EXPECT_DOUBLE_EQ(*engine->timestamp, 1740139205.25);
  EXPECT_FALSE(ParseDeepSpeedStep("[Rank 0] step=0, skipped=0, lr=[0.0], mom=[0.9]"))
      << "_report_progress(0) at initialisation";
  EXPECT_EQ(DetectStep("steps: 5 loss: 1.0 iter time (s): 0.1 samples/sec: 1.0")->profile,
            StepProfile::kDeepSpeed);
}

TEST(StepLines, T5xThroughCluLoggingWriter) {
  // clu/metric_writers/logging_writer.py write_scalars: "[%d]%s %s" under absl.
  auto s = ParseT5xStep(
      "I0421 12:24:40.123456 139872 logging_writer.py:48] [1200] collection=train "
      "accuracy=0.51, cross_ent_loss=2.25, timing/seconds=50.5, timing/steps_per_second=1.98");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 1200);
  EXPECT_NEAR(*s->seconds, 1 / 1.98, 1e-9);
  EXPECT_FALSE(ParseT5xStep(
      "I0421 12:24:40.123456 1 logging_writer.py:64] [1200] Got images: {'x': (1, 2)}."));
  EXPECT_EQ(DetectStep("I0421 12:00:00.000001 7 logging_writer.py:48] [5] loss=2.0")->profile,
            StepProfile::kT5x);
}

TEST(StepLines, TorchTitanWithAndWithoutColour) {
  // metrics.py: f"{color.red}step: {step:2}  {color.green}loss: {loss:8.5f}  ..."
  auto coloured = DetectStep(
      "[rank0]:[titan] 2025-01-01 12:00:01,000 - root - INFO - \x1b[31mstep: 11  "
      "\x1b[32mloss:  7.01234  \x1b[38;2;180;60;0mgrad_norm:  1.2345  \x1b[39m");
  ASSERT_TRUE(coloured);
  EXPECT_EQ(coloured->profile, StepProfile::kTorchTitan);
  EXPECT_EQ(coloured->sample.step, 11);
  EXPECT_FALSE(ParseTorchTitanStep(
      "[titan] 2025-01-01 12:00:01,000 - root - INFO - \x1b[33mvalidate step: 11  "
      "\x1b[32mloss:  7.0123"))
      << "evaluation, metrics.py log_validation";
}

TEST(StepLines, GenericCounter) {
  // tests/fixtures/real/pytorch/train_ddp.py: f"step {step} loss {loss:.4f}".
  for (std::string_view line :
       {"step 7 loss 9.2315", "0: step 7 loss 9.2315", "[default0]:step 7 loss 9.2315",
        "Step 7/40 | lr 1e-4", "iteration 7, loss=0.3", "Step: 7, Loss: 0.3"}) {
    auto s = DetectStep(line);
    ASSERT_TRUE(s) << line;
    EXPECT_EQ(s->profile, StepProfile::kGeneric) << line;
    EXPECT_EQ(s->sample.step, 7) << line;
  }
  EXPECT_EQ(*ParseGenericStep("Step 7/40 | lr 1e-4")->total_steps, 40);
  for (std::string_view line :
       {"step 3 of preprocessing", "max_steps 100 loss", "substep 4 loss 2", "eval step 5 loss 2",
        "validation step 5 loss 1.0", "step 3.5 loss 1", "steps 10 loss 1", "step3 loss 1"}) {
    EXPECT_FALSE(ParseGenericStep(line)) << line;
  }
}

TEST(StepLines, DurationUnits) {
  EXPECT_DOUBLE_EQ(*ParseDuration("23", " ms per step", 1.0), 0.023);
  EXPECT_DOUBLE_EQ(*ParseDuration("23ms", "", 1.0), 0.023);
  EXPECT_DOUBLE_EQ(*ParseDuration("0.5s", "", 0.001), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("0.5", "s/it", 1.0), 0.5) << "s/it reads as seconds";
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5", " min", 1.0), 90.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("250", ", loss 2", 0.001), 0.25) << "(?P<ms>...) bare";
  EXPECT_DOUBLE_EQ(*ParseDuration("2", "", 1.0), 2.0);
  EXPECT_FALSE(ParseDuration("fast", "", 1.0));
}

TEST(StepLines, Timestamps) {
  EXPECT_DOUBLE_EQ(*ParseIsoTimestamp("2026-11-20T10:00:00Z"), 1795168800.0);
  EXPECT_DOUBLE_EQ(*ParseIsoTimestamp("2026-11-20 10:00:00.5"), 1795168800.5);
  EXPECT_FALSE(ParseIsoTimestamp("2026-13-20T10:00:00"));
  EXPECT_FALSE(ParseIsoTimestamp("2026-11-20"));
  EXPECT_DOUBLE_EQ(*FindIsoTimestamp("*** JOB 5 CANCELLED AT 2026-11-20T10:00:00 ***"),
                   1795168800.0);
  EXPECT_FALSE(FindIsoTimestamp("no time here 12:00:00"));
}

// The civil-day arithmetic agrees with libc's timegm on every day of
// years around the epoch, a leap second, and days past their month's end
// (which timegm rolls into the next month).
TEST(StepLines, IsoTimestampsAgreeWithTimegm) {
  for (int year : {1969, 1970, 1999, 2000, 2024, 2026, 2100}) {
    for (int month = 1; month <= 12; ++month) {
      for (int day = 1; day <= 31; ++day) {
        for (const char* clock : {"00:00:00", "23:59:59", "12:34:60"}) {
          const std::string text = fmt::format("{:04}-{:02}-{:02}T{}", year, month, day, clock);
          tm t{};
          t.tm_year = year - 1900;
          t.tm_mon = month - 1;
          t.tm_mday = day;
          t.tm_hour = std::stoi(std::string(clock, 2));
          t.tm_min = std::stoi(std::string(clock + 3, 2));
          t.tm_sec = std::stoi(std::string(clock + 6, 2));
          const auto parsed = ParseIsoTimestamp(text);
          ASSERT_TRUE(parsed) << text;
          ASSERT_EQ(*parsed, static_cast<double>(timegm(&t))) << text;
        }
      }
    }
  }
}

TEST(StepLines, YearlessTimestampsTakeTheGivenYear) {
  EXPECT_EQ(ParseYearlessTimestamp("I1120 10:00:05.000000 77 x.cc:1] hi", 2026),
            ParseIsoTimestamp("2026-11-20 10:00:05"));
  EXPECT_EQ(ParseYearlessTimestamp("3: [11/20 10:00:05 d2]: hi", 999),
            ParseIsoTimestamp("0999-11-20 10:00:05"))
      << "a year of fewer digits is zero-padded";
  EXPECT_FALSE(ParseYearlessTimestamp("I1120 10:00:05.000000 77 x.cc:1] hi", 10000));
}

TEST(StepLines, TaskLabels) {
  EXPECT_EQ(TaskLabel("0: completed step: 1"), 0);
  EXPECT_EQ(TaskLabel("  12: x"), 12);
  EXPECT_FALSE(TaskLabel("completed step: 1"));
  EXPECT_FALSE(TaskLabel("10:00:00 started"));
  EXPECT_EQ(WithoutTaskLabel("3: hello"), "hello");
  // SplitTaskLabel reads the label once and says what both say.
  for (std::string_view line : {"0: completed step: 1", "  12: x", "completed step: 1",
                                "10:00:00 started", "3: ", "1234567: x", ": x", "7:x"}) {
    const auto [task, rest] = SplitTaskLabel(line);
    EXPECT_EQ(task, TaskLabel(line)) << line;
    EXPECT_EQ(rest, WithoutTaskLabel(line)) << line;
  }
}

TEST(StepSeries, WarmupRecentWindowAndSlowdown) {
  StepSeries series;
  for (int step = 0; step < 60; ++step) {
    double seconds = step < 5 ? 9.0 : (step >= 50 ? 1.5 : 1.0);
    series.Add(step, seconds, static_cast<uint64_t>(step + 1), false);
  }
  series.Add(10, 1.0, 99, false);  // a repeat (another task or a restart)
  EXPECT_EQ(series.count(), 60u);
  EXPECT_EQ(series.repeats(), 1u);
  EXPECT_NEAR(*series.SteadyStepSeconds(), (45 * 1.0 + 10 * 1.5) / 55, 1e-9) << "warmup skipped";
  EXPECT_DOUBLE_EQ(*series.RecentMedian(), 1.0);
  EXPECT_DOUBLE_EQ(*series.RecentP99(), 1.5);
  EXPECT_NEAR(*series.TailSlowdown(), 1.5, 1e-9);
}

TEST(StepSeries, CheckpointStepsStayOutOfTheRecentWindow) {
  StepSeries series;
  for (int step = 0; step < 40; ++step)
    series.Add(step, step % 10 == 0 ? 30.0 : 1.0, step, step % 10 == 0);
  EXPECT_DOUBLE_EQ(*series.RecentP99(), 1.0);
  EXPECT_FALSE(StepSeries().SteadyStepSeconds());
}

TEST(Percentile, NearestRank) {
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 3}, 0.5), 3);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 0.99), 4);
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0);
}

}  // namespace
}  // namespace jobmon::triage

namespace jobmon::triage {
namespace {

TEST(TqdmBurstSeconds, HowLongABurstOfBarUpdatesWasOutOfSight) {
  EXPECT_FALSE(TqdmBurstSeconds(" 40%|####| 4/10 [00:08<00:12,  2.0it/s]")) << "one update";
  EXPECT_FALSE(TqdmBurstSeconds("step 3 loss 2"));
  EXPECT_DOUBLE_EQ(*TqdmBurstSeconds("\rEpoch 0:  0%| | 0/20 [00:00<?, ?it/s]\rEpoch 0: 5%| | "
                                     "1/20 [00:00<00:12, 1.6it/s]\rEpoch 0: 70%|#| 14/20 "
                                     "[00:08<00:03,  1.65it/s, v_num=0]"),
                   8);
  // The next epoch's bar within the same burst adds its own time.
  EXPECT_DOUBLE_EQ(*TqdmBurstSeconds("E0: 95%|#| 19/20 [00:11<00:01]\rE0: 100%|#| 20/20 "
                                     "[00:12<00:00]\rE1: 0%| | 0/20 [00:00<?]\rE1: 50%|#| 10/20 "
                                     "[00:06<00:06]"),
                   7);
  EXPECT_DOUBLE_EQ(*TqdmBurstSeconds("a [1:00:00<1:00:00]\rb [1:02:30<0:57:30]"), 150);
}

TEST(IsLoggingDict, HfTrainersDictsAndScriptsJsonAreProgressWithoutAStep) {
  EXPECT_TRUE(IsLoggingDict(
      "{'loss': '14.14', 'grad_norm': '8.439', 'learning_rate': '0.001', 'epoch': '0.25'}"));
  EXPECT_TRUE(IsLoggingDict("  {\"train_loss\": 0.41, \"lr\": 3e-4}  "));
  EXPECT_TRUE(IsLoggingDict("{'eval_loss': 0.3, 'epoch': 1.0}"));
  EXPECT_FALSE(IsLoggingDict("{'model_type': 'bert', 'hidden_size': 768}")) << "a config";
  EXPECT_FALSE(IsLoggingDict("loss {'a': 1}")) << "not a dict line";
  EXPECT_FALSE(IsLoggingDict("{}"));
}

}  // namespace
}  // namespace jobmon::triage
