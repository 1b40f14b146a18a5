// Hardening items 13 and 4: `jobmon status` with a job id that does not fit
// 32 bits, with a FIFO as its log argument, and with a job whose log its
// user replaced by a symlink to a root-only file or a FIFO (read as the
// job's user through OpenUserFile), run as the real binary (bounded by
// RunCommand's deadline: a hang is a failure, not a stuck test).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jobmon/chart/gnuplot_chart.h"
#include "jobmon/common/base64.h"
#include "jobmon/common/run_command.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/job_input.h"

namespace jobmon {
namespace {

namespace fs = std::filesystem;

class StatusCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "jobmon.toml") << "";  // defaults; never /etc/jobmon
    auto store = monitor::StateStore::Open((dir_ / "state.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    monitor::JobRecord job;  // job 1: what a wrapped 4294967297 would show
    job.job_id = 1;
    job.name = "job-one";
    job.first_seen = job.last_seen = 1;
    ASSERT_TRUE((*store)->UpsertJob(job).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // stdout and stderr together; exit code, or -1 when killed at the deadline.
  CommandResult Status(const std::string& argument, const std::string& extra = "") {
    const std::string command = std::string("'") + JOBMON_CLI + "' status '" + argument +
                                "' --db '" + (dir_ / "state.db").string() + "' -c '" +
                                (dir_ / "jobmon.toml").string() + "' " + extra + " 2>&1";
    auto result = RunCommand({"/bin/sh", "-c", command}, std::chrono::seconds(10));
    EXPECT_TRUE(result.ok());
    return result.ok() ? *result : CommandResult{};
  }
  fs::path dir_;
};

TEST_F(StatusCliTest, AJobIdBeyond32BitsIsRefusedNotWrapped) {
  auto wrapped = Status("4294967297");
  EXPECT_EQ(wrapped.exit_code, 2) << wrapped.output;
  EXPECT_NE(wrapped.output.find("out of range"), std::string::npos) << wrapped.output;
  EXPECT_EQ(wrapped.output.find("job-one"), std::string::npos) << "job 1 shown for 2^32+1";
  auto huge = Status("12345678901234567890123");
  EXPECT_EQ(huge.exit_code, 2) << huge.output;
  EXPECT_NE(huge.output.find("out of range"), std::string::npos) << huge.output;
  EXPECT_EQ(huge.output.find("internal error"), std::string::npos) << huge.output;
  auto one = Status("1");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("job-one"), std::string::npos) << one.output;
}

TEST_F(StatusCliTest, AFifoAsTheLogIsRefusedWithoutOpeningIt) {
  const std::string fifo = (dir_ / "trap.log").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto result = Status(fifo);
  EXPECT_FALSE(result.timed_out) << "opened the FIFO and waited for a writer";
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("refused: a FIFO"), std::string::npos) << result.output;
  // A symlink the caller typed is followed (the caller's own rights), but
  // the FIFO behind it is still not opened.
  const std::string link = (dir_ / "link.log").string();
  fs::create_symlink(fifo, link);
  auto linked = Status(link);
  EXPECT_FALSE(linked.timed_out) << "opened the FIFO behind the symlink";
  EXPECT_EQ(linked.exit_code, 2) << linked.output;
  // A symlink to a real log works.
  std::ofstream(dir_ / "real.log") << "0: completed step: 41, seconds: 1.0\n";
  fs::remove(link);
  fs::create_symlink(dir_ / "real.log", link);
  auto real = Status(link);
  EXPECT_EQ(real.exit_code, 0) << real.output;
  EXPECT_NE(real.output.find("last step: 41"), std::string::npos) << real.output;
}

// The daemon recorded the job (user nobody); its log is what the user left
// there. `jobmon status` run as root must read it as nobody.
TEST_F(StatusCliTest, AJobsLogIsReadAsTheJobsUserThroughTheOpener) {
  fs::permissions(dir_, fs::perms(0755));  // nobody may traverse it
  const std::string secret = (dir_ / "root-only").string();
  std::ofstream(secret) << "0: completed step: 987654, seconds: 1.0\n0: SECRET-LINE\n";
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  const std::string linked = (dir_ / "linked.out").string();
  fs::create_symlink(secret, linked);
  const std::string fifo = (dir_ / "fifo.out").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  {
    auto store = monitor::StateStore::Open((dir_ / "state.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    uint32_t id = 10;
    for (const std::string& log : {linked, secret, fifo, secret}) {
      monitor::JobRecord job;
      job.job_id = id++;
      job.name = "hostile";
      // Job 13: a user name that does not resolve here.
      job.user = job.job_id == 13 ? "no-such-user-jobmon" : "nobody";
      job.log_path = log;
      job.first_seen = job.last_seen = 1;
      ASSERT_TRUE((*store)->UpsertJob(job).ok());
    }
  }
  for (const char* id : {"10", "11", "12", "13"}) {
    auto result = Status(id);
    EXPECT_FALSE(result.timed_out) << "job " << id << " hung on its log";
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_EQ(result.output.find("987654"), std::string::npos)
        << "job " << id << " read the secret";
    EXPECT_NE(result.output.find("no step yet"), std::string::npos) << result.output;
  }
  EXPECT_NE(Status("10").output.find("refused: a symlink"), std::string::npos);
  const std::string direct = Status("11").output;  // the root-only file itself (a hard link)
  EXPECT_TRUE(direct.find("Permission denied") != std::string::npos ||
              direct.find("not readable by uid 65534") != std::string::npos)
      << direct;
  EXPECT_NE(Status("12").output.find("refused: a FIFO"), std::string::npos);
  if (geteuid() == 0) {
    EXPECT_NE(Status("13").output.find("the job's user is not known"), std::string::npos);
  }
}

// A stalled job's picture: steps to 150 s, nothing after, GPUs busy.
chart::Picture StalledPicture(bool stalled) {
  chart::Picture picture;
  picture.title = "Job 20 (llm): hang/busy-wait";
  picture.from = 1'700'000'000;
  picture.to = picture.from + 300;
  for (int i = 0; i <= 150; i += 5) picture.steps.push_back({picture.from + i, i / 1.5});
  picture.expected = {{picture.from, 0}, {picture.to, 200}};
  if (stalled) {
    picture.stall_since = picture.from + 150;
    picture.alerted_at = picture.from + 240;
  }
  for (const char* name : {"node1", "node2"}) {
    chart::HostPanel host{name, {}, {}};
    chart::Line util{"GPU 0", {}}, power{"GPU 0", {}};
    for (int i = 0; i <= 300; i += 5) {
      util.points.push_back({picture.from + i, 100});
      power.points.push_back({picture.from + i, i < 150 ? 420.0 : 160.0});
    }
    host.utilization = {util};
    host.power = {power};
    picture.hosts.push_back(host);
  }
  return picture;
}

// `jobmon status ID --html FILE` writes the report with the chart the
// daemon kept for the incident, and the report is looked at: rendered in
// headless Chromium, the screenshot checked (not blank, the chart on it),
// the chart checked for the stall band (tests/unit/cli/html_report_check.py).
// A chart without a stall fails the same check: it can fail.
TEST_F(StatusCliTest, TheHtmlReportCarriesTheIncidentsChartAndChromiumShowsIt) {
  auto png = chart::RenderPng(StalledPicture(true), {});
  ASSERT_TRUE(png) << png.error().message;
  auto calm = chart::RenderPng(StalledPicture(false), {});
  ASSERT_TRUE(calm) << calm.error().message;
  {
    auto store = monitor::StateStore::Open((dir_ / "state.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    for (uint32_t id : {20u, 21u}) {
      monitor::JobRecord job;
      job.job_id = id;
      job.name = "llm";
      job.first_seen = job.last_seen = 1'700'000'000;
      ASSERT_TRUE((*store)->UpsertJob(job).ok());
      monitor::IncidentRecord incident;
      incident.job_id = id;
      incident.klass = "hang/busy-wait";
      incident.state = "open";
      incident.opened_at = 1'700'000'240;
      incident.summary = "no step for 90 s; every GPU busy at 100%";
      auto opened = (*store)->OpenIncident(incident);
      ASSERT_TRUE(opened.ok());
      ASSERT_TRUE((*store)->SaveIncidentChart(opened->first, id == 20 ? *png : *calm).ok());
    }
  }
  const std::string html = (dir_ / "report.html").string();
  auto result = Status("20", "--html '" + html + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("with the chart of incident"), std::string::npos) << result.output;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("data:image/png;base64," + Base64Encode(*png)), std::string::npos);
  EXPECT_NE(page.find("no step for 90 s"), std::string::npos) << "the status text is in it";
  struct stat st {};
  ASSERT_EQ(stat(html.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const std::string shot = (dir_ / "report.png").string();
  auto look = [&](const std::string& file) {
    return RunCommand({JOBMON_PYTHON3, JOBMON_HTML_CHECK, "--html", file, "--screenshot", shot},
                      std::chrono::seconds(150));
  };
  auto looked = look(html);
  ASSERT_TRUE(looked.ok());
  EXPECT_EQ(looked->exit_code, 0) << looked->output;
  std::printf("%s", looked->output.c_str());
  // To keep what Chromium showed: JOBMON_HTML_SCREENSHOT=FILE.
  if (const char* keep = std::getenv("JOBMON_HTML_SCREENSHOT"))
    fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);

  const std::string calm_html = (dir_ / "calm.html").string();
  ASSERT_EQ(Status("21", "--html '" + calm_html + "'").exit_code, 0);
  auto refused = look(calm_html);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->exit_code, 1) << "a chart without the stall band passed: " << refused->output;
}

TEST(ParseJobId, DigitsInRangeOnly) {
  EXPECT_EQ(triage::ParseJobId("1").value(), 1u);
  EXPECT_EQ(triage::ParseJobId("4294967295").value(), 4294967295u);
  EXPECT_EQ(triage::ParseJobId("007").value(), 7u);
  for (const char* bad :
       {"0", "4294967296", "4294967297", "12345678901234567890123", "", "-1", "+1", "1x", " 1"}) {
    EXPECT_FALSE(triage::ParseJobId(bad).ok()) << bad;
  }
  EXPECT_NE(triage::ParseJobId("4294967297").error().message.find("out of range"),
            std::string::npos);
}

}  // namespace
}  // namespace jobmon
