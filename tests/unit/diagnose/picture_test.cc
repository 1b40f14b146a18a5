// A diagnosis as a chart (diagnose/include/jobmon/diagnose/picture.h):
// the expected line's rule, the stall band, the accused hosts first, one
// line per GPU, the chart's bounds; then Diagnose asking the GPU series
// when the picture is wanted, and the --html page around it.

#include "jobmon/diagnose/picture.h"

#include <gtest/gtest.h>

#include <cmath>

#include "canned_prom_source.h"
#include "diagnose.h"
#include "diagnose_series.h"
#include "jobmon/diagnose/report.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Grid;

// Steps 0..60 from t=1000: step 0 after a 60 s compile, then 10 s a step,
// with a 100 s checkpoint pause before step 40; the last step at 1760.
std::vector<StepTime> HangSteps() {
  std::vector<StepTime> steps;
  double t = 1000;
  for (int64_t step = 0; step <= 60; ++step) {
    t += step == 0 ? 60 : (step == 40 ? 110 : 10);
    steps.push_back({step, t});
  }
  return steps;
}

Diagnosis HangDiagnosis() {
  Diagnosis d;
  d.context.job = "4242";
  d.context.job_range = {1000, 2000};
  d.context.tsdb_range = {900, 2100};
  d.context.hosts = {"n1", "n2", "n3"};
  d.context.steps = HangSteps();
  d.context.scrape_interval_seconds = 5;
  d.context.triage.primary_class = "hang";
  d.context.triage.status = "hanging";
  d.context.triage.hang_start = d.context.steps.back().time;
  PlaybookResult hang;
  hang.playbook = "hang";
  hang.verdict = "busy-wait-hang";
  d.playbooks.push_back(hang);
  return d;
}

std::vector<Series> PerGpu(const std::vector<std::string>& hosts,
                           const std::vector<std::string>& gpus, double value) {
  std::vector<Series> out;
  for (const auto& host : hosts) {
    for (const auto& gpu : gpus) {
      out.push_back(
          Grid({{"host", host}, {"gpu", gpu}}, 1000, 2000, 10, [=](double) { return value; }));
    }
  }
  return out;
}

TEST(DiagnosisPicture, ExpectedLineRunsFromTheFirstSteadyStepAtTheMedianInterval) {
  const Diagnosis d = HangDiagnosis();
  auto line = ExpectedLine(d.context, 2000);
  ASSERT_EQ(line.size(), 2u);
  // Warmup (kit.h's SteadyRange): steps 0-4 are not steady; step 5 is at
  // 1060 + 5 x 10. The compile and the checkpoint pause do not bend the
  // median: 10 s a step, so step 5 + (2000 - 1110) / 10 at the end.
  EXPECT_EQ(line[0].t, 1110);
  EXPECT_EQ(line[0].v, 5);
  EXPECT_EQ(line[1].t, 2000);
  EXPECT_DOUBLE_EQ(line[1].v, 5 + 89);
  DiagnoseContext one_step = d.context;
  one_step.steps.resize(1);
  EXPECT_TRUE(ExpectedLine(one_step, 2000).empty()) << "no interval, no line";
  EXPECT_TRUE(ExpectedLine(d.context, 1000).empty()) << "the end before the first steady step";
}

TEST(DiagnosisPicture, TheStallBandStartsAtTheHangAndOnlyForAHang) {
  Diagnosis d = HangDiagnosis();
  EXPECT_EQ(StallSince(d.context), 1760);
  d.context.triage.hang_start.reset();  // a hang whose log had no stamped steps
  EXPECT_EQ(StallSince(d.context), 1760) << "the step map's last step";
  d.context.triage.primary_class = "";
  d.context.triage.status = "hanging";
  EXPECT_EQ(StallSince(d.context), 1760);
  d.context.triage.status = "failed";
  d.context.triage.primary_class = "oom-host";
  EXPECT_FALSE(StallSince(d.context));
  auto picture = DiagnosisPicture(d, {}, {});
  EXPECT_FALSE(picture.stall_since);
}

TEST(DiagnosisPicture, AccusedHostsComeFirstThenTheRestByName) {
  Diagnosis d = HangDiagnosis();
  d.context.hosts = {"a1", "n1", "n2", "n3", "n4"};
  d.context.triage.accused_hosts = {"n4"};
  Finding cause;
  cause.host = "n3";
  cause.severity = Severity::kCritical;
  d.playbooks[0].root_cause = cause;
  Finding warning = cause, critical = cause, info = cause;
  warning.host = "n2";
  warning.severity = Severity::kWarning;
  critical.host = "n1";
  info.host = "a1";
  info.severity = Severity::kInfo;
  d.playbooks[0].anomalies = {warning, info, critical, cause};
  EXPECT_EQ(NamedHosts(d), (std::vector<std::string>{"n4", "n3", "n1", "n2"}));

  auto picture = DiagnosisPicture(d, PerGpu({"a1", "n1", "n2", "n3"}, {"0"}, 97),
                                  PerGpu({"a1", "n1", "n2", "n3"}, {"0"}, 650));
  std::vector<std::string> order;
  for (const auto& host : picture.hosts) order.push_back(host.host);
  EXPECT_EQ(order, (std::vector<std::string>{"n4", "n3", "n1", "n2", "a1"}));
  // n4 was accused and answered nothing: its panel stays, empty (a dead host).
  EXPECT_TRUE(picture.hosts[0].utilization.empty());
  EXPECT_EQ(picture.hosts[1].utilization.size(), 1u);
}

TEST(DiagnosisPicture, OneLinePerGpuInGpuOrderWithTheTitleStepsAndStall) {
  const Diagnosis d = HangDiagnosis();
  auto picture = DiagnosisPicture(d, PerGpu({"n1"}, {"10", "2", "0"}, 97),
                                  PerGpu({"n1", "n2"}, {"1", "0"}, 300));
  EXPECT_EQ(picture.title, "Job 4242: hang busy-wait-hang");
  EXPECT_EQ(picture.from, 1000);
  EXPECT_EQ(picture.to, 2000);
  ASSERT_EQ(picture.steps.size(), 61u);
  EXPECT_EQ(picture.steps.back(), (chart::Point{1760, 60}));
  EXPECT_EQ(picture.stall_since, 1760);
  ASSERT_EQ(picture.expected.size(), 2u);
  ASSERT_EQ(picture.hosts.size(), 3u);  // n1, n2 with series, n3 in the TSDB without
  const auto& n1 = picture.hosts[0];
  EXPECT_EQ(n1.host, "n1");
  ASSERT_EQ(n1.utilization.size(), 3u);
  EXPECT_EQ(n1.utilization[0].label, "GPU 0");
  EXPECT_EQ(n1.utilization[1].label, "GPU 2");
  EXPECT_EQ(n1.utilization[2].label, "GPU 10");
  EXPECT_EQ(n1.utilization[2].points.front(), (chart::Point{1000, 97}));
  ASSERT_EQ(n1.power.size(), 2u);
  EXPECT_EQ(n1.power[1].label, "GPU 1");
  EXPECT_EQ(picture.hosts[1].host, "n2");
  EXPECT_TRUE(picture.hosts[1].utilization.empty());
  EXPECT_EQ(picture.hosts[1].power.size(), 2u);
  EXPECT_EQ(picture.hosts[2].host, "n3");
}

TEST(DiagnosisPicture, ALongJobStaysWithinTheChartsBounds) {
  Diagnosis d = HangDiagnosis();
  d.context.job_range = {0, 86400};
  d.context.steps.clear();
  for (int64_t s = 0; s < 8000; ++s) d.context.steps.push_back({s, 10.0 * s});
  d.context.triage = {};
  std::vector<std::string> hosts;
  for (int h = 10; h < 22; ++h) hosts.push_back("h" + std::to_string(h));
  d.context.hosts = hosts;
  std::vector<Series> util;
  for (const auto& host : hosts) {
    util.push_back(Grid({{"host", host}, {"gpu", "0"}}, 0, 86400, 15, [](double) { return 90; }));
  }
  auto picture = DiagnosisPicture(d, util, {});
  EXPECT_LE(picture.steps.size(), chart::kMaxPointsPerLine);
  EXPECT_EQ(picture.steps.back().v, 7999);
  EXPECT_EQ(picture.hosts.size(), chart::kMaxHostPanels);
  EXPECT_EQ(picture.hosts_left_out, 12 - chart::kMaxHostPanels);
  EXPECT_LE(picture.hosts[0].utilization[0].points.size(), chart::kMaxPointsPerLine);
  // The query step keeps a day at 5 s scrapes within the bound too.
  const double step = PictureStep(d.context);
  EXPECT_LE(std::floor(86400 / step) + 1, chart::kMaxPointsPerLine);
  EXPECT_GE(step, d.context.scrape_interval_seconds);
}

// The canned job of diagnose_run_test.cc with GPUs; power queries fail when
// `power_fails`.
class GpuJob : public CannedPromSource {
 public:
  explicit GpuJob(bool power_fails) : power_fails_(power_fails) {
    Labels("__name__", {"hw_gpu_power_watts", "hw_gpu_utilization_percent", "tb_step", "up"});
    Labels("host", {"n1", "n2"});
    Answer("tb_step", {Grid({{"host", "n1"}}, 1000, 1600, 5,
                            [](double t) { return std::floor((t - 1000) / 10); })});
    Answer("timestamp(up)", {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double t) { return t; }),
                             Grid({{"host", "n2"}}, 1000, 1600, 5, [](double t) { return t; })});
    Answer("up", {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double) { return 1; }),
                  Grid({{"host", "n2"}}, 1000, 1600, 5, [](double) { return 1; })});
    for (const char* host : {"n1", "n2"}) {
      util_.push_back(
          Grid({{"host", host}, {"gpu", "0"}}, 1000, 1600, 5, [](double) { return 97; }));
      power_.push_back(
          Grid({{"host", host}, {"gpu", "0"}}, 1000, 1600, 5, [](double) { return 650; }));
    }
    Answer("hw_gpu_utilization_percent", util_);
    Answer("hw_gpu_power_watts", power_);
  }
  Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                           double step) override {
    if (power_fails_ && promql == "hw_gpu_power_watts") return Error{"HTTP 503"};
    return CannedPromSource::QueryRange(promql, range, step);
  }

 private:
  bool power_fails_;
  std::vector<Series> util_, power_;
};

DiagnoseInputs GpuInputs(bool picture) {
  DiagnoseInputs in;
  in.job = "77";
  in.tsdb_range = {900, 1700};
  in.playbooks = {"gpu"};
  in.picture = picture;
  return in;
}

TEST(DiagnosePicture, AskedOnlyWhenWantedAndAFailedQueryCostsItsLinesOnly) {
  GpuJob plain(false);
  Diagnosis without = Diagnose(plain, GpuInputs(false));
  EXPECT_FALSE(without.picture);

  GpuJob job(false);
  std::vector<std::string> progress;
  Diagnosis d =
      Diagnose(job, GpuInputs(true), [&](std::string_view line) { progress.emplace_back(line); });
  ASSERT_TRUE(d.picture);
  EXPECT_TRUE(d.picture_errors.empty());
  EXPECT_EQ(d.picture->title, "Job 77: gpu " + d.playbooks[0].verdict);
  ASSERT_EQ(d.picture->hosts.size(), 2u);
  EXPECT_EQ(d.picture->hosts[0].utilization.size(), 1u);
  EXPECT_EQ(d.picture->hosts[0].power.size(), 1u);
  EXPECT_FALSE(d.picture->steps.empty()) << "tb_step's map";
  EXPECT_FALSE(d.picture->stall_since) << "no triage, no hang";
  EXPECT_EQ(progress.back(), "picture: 2 host panel(s)");
  // Its two queries are the last ones asked, each a plain selector.
  ASSERT_GE(job.asked().size(), 2u);
  EXPECT_EQ(job.asked()[job.asked().size() - 2], "hw_gpu_utilization_percent");
  EXPECT_EQ(job.asked().back(), "hw_gpu_power_watts");

  GpuJob failing(true);
  Diagnosis partial = Diagnose(failing, GpuInputs(true));
  ASSERT_TRUE(partial.picture);
  ASSERT_EQ(partial.picture_errors.size(), 1u);
  EXPECT_EQ(partial.picture_errors[0], "hw_gpu_power_watts: HTTP 503");
  EXPECT_EQ(partial.picture->hosts[0].utilization.size(), 1u);
  EXPECT_TRUE(partial.picture->hosts[0].power.empty());
}

TEST(DiagnoseHtmlPage, TitleChartVerdictsAndTheReport) {
  Diagnosis d = HangDiagnosis();
  d.picture = DiagnosisPicture(d, {}, {});
  auto page = HtmlReport(d, std::string("\x89PNG..."));
  EXPECT_EQ(page.title, "Job 4242: hang busy-wait-hang");
  EXPECT_NE(page.subtitle.find("triage: hang (hanging)"), std::string::npos) << page.subtitle;
  ASSERT_EQ(page.images.size(), 1u);
  EXPECT_EQ(page.images[0].png, "\x89PNG...");
  EXPECT_NE(page.images[0].caption.find("(shaded)"), std::string::npos);
  ASSERT_EQ(page.sections.size(), 2u);
  EXPECT_EQ(page.sections[0].heading, "Verdicts");
  EXPECT_EQ(page.sections[0].text, "hang: busy-wait-hang\n");
  EXPECT_EQ(page.sections[1].heading, "Report");
  EXPECT_EQ(page.sections[1].text, RenderMarkdown(d));

  // No gnuplot: no image, a line saying why, the rest as before.
  d.picture_errors = {"hw_gpu_power_watts: HTTP 503"};
  auto bare = HtmlReport(d, Error{"gnuplot: No such file or directory"});
  EXPECT_TRUE(bare.images.empty());
  ASSERT_EQ(bare.sections.size(), 3u);
  EXPECT_EQ(bare.sections[0].heading, "Chart");
  EXPECT_NE(bare.sections[0].text.find("No chart: gnuplot: No such file or directory"),
            std::string::npos)
      << bare.sections[0].text;
  EXPECT_NE(bare.sections[0].text.find("hw_gpu_power_watts: HTTP 503"), std::string::npos);
  EXPECT_EQ(bare.sections[2].text, RenderMarkdown(d));
}

}  // namespace
}  // namespace jobmon::diagnose
