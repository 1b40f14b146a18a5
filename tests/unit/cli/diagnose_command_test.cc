// `jobmon diagnose`: usage errors through the real binary (exit 2 before
// anything is opened), and the command's flow with a fake diagnoser:
// the request it builds, the report it prints, the exit codes.

#include "diagnose_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "jobmon/common/run_command.h"
#include "jobmon/diagnose/diagnosis_report.h"
#include "jobmon/diagnose/picture.h"
#include "jobmon/triage/stall_rule.h"

namespace jobmon::cli {
namespace {

namespace fs = std::filesystem;
using diagnose::TargetOutcome;
using diagnose::TargetRequest;

CommandResult RunJobmon(const std::string& arguments) {
  const std::string command = std::string("'") + JOBMON_CLI + "' diagnose " + arguments + " 2>&1";
  auto result = RunCommand({"/bin/sh", "-c", command}, std::chrono::seconds(10));
  EXPECT_TRUE(result.ok());
  return result.ok() ? *result : CommandResult{};
}

TEST(DiagnoseCli, UsageErrorsExitTwo) {
  auto unknown = RunJobmon("1234 --playbook tgs -c /dev/null");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown playbook 'tgs'"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("training"), std::string::npos) << unknown.output;  // the names

  auto both = RunJobmon("1234 --health --playbook hang -c /dev/null");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--health"), std::string::npos) << both.output;

  auto none = RunJobmon("-c /dev/null");
  EXPECT_EQ(none.exit_code, 2) << none.output;

  auto flag = RunJobmon("1234 --no-such-flag");
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
}

TEST(DiagnoseCli, HelpNamesPlaybooksAndExitCodes) {
  auto help = RunJobmon("--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* text : {"--playbook", "--health", "--compare", "--json", "--prometheus",
                           "--store", "--cluster", "--store-token-file", "--html FILE",
                           "hang, heartbeat, oom, hardware, gpu, network, training", "Exit codes"})
    EXPECT_NE(help.output.find(text), std::string::npos) << text << "\n" << help.output;
}

class DiagnoseFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = fs::temp_directory_path() / ("jobmon-diagnose-" + std::to_string(getpid()) + ".toml");
    std::ofstream(config_)
        << "[triage]\nstep_regex = 'it (?P<step>\\d+)'\nstall_min_seconds = \"10s\"\n";
    args_.target = "4242";
    args_.config_path = config_.string();
  }
  void TearDown() override { fs::remove(config_); }

  // Runs with a fake that records the request and answers `outcome`.
  int Run(const TargetOutcome& outcome) {
    return RunDiagnose(
        args_,
        [&](const TargetRequest& r) {
          seen_ = r;
          if (r.progress) r.progress("playbook hang");
          return outcome;
        },
        out_, err_);
  }

  static TargetOutcome Diagnosed(std::string verdict) {
    TargetOutcome o;
    o.diagnosis.context.job = "4242";
    diagnose::PlaybookResult p;
    p.playbook = "hang";
    p.analysis_type = "hang";
    p.verdict = std::move(verdict);
    o.diagnosis.playbooks.push_back(p);
    return o;
  }

  fs::path config_;
  DiagnoseArgs args_;
  std::optional<TargetRequest> seen_;
  std::ostringstream out_, err_;
};

TEST_F(DiagnoseFlow, MarkdownWithProgressAndTheConfigsStepRegex) {
  EXPECT_EQ(Run(Diagnosed("busy-wait-hang")), 0);
  ASSERT_TRUE(seen_);
  EXPECT_EQ(seen_->argument, "4242");
  EXPECT_EQ(seen_->playbooks, std::vector<std::string>{"auto"});
  EXPECT_EQ(seen_->step_regex, "it (?P<step>\\d+)");
  // [triage] stall_min_seconds, the old name of [stall] min_stall: the one
  // rule's floor, as `jobmon triage` and the monitor read it.
  EXPECT_EQ(seen_->stall_min_seconds, 10);
  EXPECT_NE(out_.str().find("## TSDB Diagnosis: 4242"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("`busy-wait-hang`"), std::string::npos);
  EXPECT_NE(err_.str().find("jobmon diagnose: playbook hang"), std::string::npos);
}

TEST_F(DiagnoseFlow, NoStallRuleInTheConfigIsTheRulesDefault) {
  std::ofstream(config_) << "[triage]\n";
  EXPECT_EQ(Run(Diagnosed("busy-wait-hang")), 0);
  ASSERT_TRUE(seen_);
  EXPECT_EQ(seen_->stall_min_seconds, triage::StallRule{}.min_stall_seconds);
  EXPECT_EQ(seen_->stall_factor, triage::StallRule{}.k);
}

TEST_F(DiagnoseFlow, QuietJsonHealth) {
  args_.quiet = true;
  args_.json = true;
  args_.health = true;
  EXPECT_EQ(Run(Diagnosed("healthy")), 0);
  EXPECT_EQ(seen_->playbooks, std::vector<std::string>{"health"});
  EXPECT_TRUE(err_.str().empty()) << err_.str();
  auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["schema"], "jobmon.diagnose/v1");
  EXPECT_EQ(j["playbooks"][0]["verdict"], "healthy");
}

TEST_F(DiagnoseFlow, SeveralPlaybooksAndAUrl) {
  args_.playbook = "hang,network";
  args_.prometheus_url = "http://127.0.0.1:9090";
  EXPECT_EQ(Run(Diagnosed("not-a-hang")), 0);
  EXPECT_EQ(seen_->playbooks, (std::vector<std::string>{"hang", "network"}));
  EXPECT_EQ(seen_->prometheus_url, "http://127.0.0.1:9090");
  args_.playbook = "auto,hang";
  EXPECT_EQ(Run(Diagnosed("x")), 2);
}

TEST_F(DiagnoseFlow, TheStoreFromTheFlagOrAsTheConfigsFallback) {
  // [diagnose] store_url alone: the fallback, with the config's cluster.
  std::ofstream(config_) << "[diagnose]\nstore_url = \"http://127.0.0.1:8428\"\n"
                            "cluster = \"c1\"\n";
  EXPECT_EQ(Run(Diagnosed("clean")), 0);
  ASSERT_TRUE(seen_ && seen_->store);
  EXPECT_EQ(seen_->store->url, "http://127.0.0.1:8428");
  EXPECT_EQ(seen_->store->cluster, "c1");
  EXPECT_FALSE(seen_->store_only);
  // --store: the store for this job; --cluster wins over the config.
  args_.store_url = "http://127.0.0.1:9428";
  args_.cluster = "c2";
  EXPECT_EQ(Run(Diagnosed("clean")), 0);
  EXPECT_EQ(seen_->store->url, "http://127.0.0.1:9428");
  EXPECT_EQ(seen_->store->cluster, "c2");
  EXPECT_TRUE(seen_->store_only);
  // Two sources, a URL that is none, a token file others can read.
  args_.prometheus_url = "http://127.0.0.1:9090";
  EXPECT_EQ(Run(Diagnosed("clean")), 2);
  args_.prometheus_url.clear();
  args_.store_url = "127.0.0.1:9428";
  EXPECT_EQ(Run(Diagnosed("clean")), 2);
  args_.store_url = "http://127.0.0.1:9428";
  const fs::path token = config_.string() + ".token";
  std::ofstream(token) << "s3cret\n";
  fs::permissions(token, fs::perms::owner_read | fs::perms::group_read);
  args_.store_token_file = token.string();
  err_.str("");
  EXPECT_EQ(Run(Diagnosed("clean")), 2);
  EXPECT_NE(err_.str().find("mode 0440"), std::string::npos) << err_.str();
  EXPECT_EQ(err_.str().find("s3cret"), std::string::npos);
  fs::permissions(token, fs::perms::owner_read);
  EXPECT_EQ(Run(Diagnosed("clean")), 0);
  EXPECT_EQ(seen_->store->bearer_token, "s3cret");
  fs::remove(token);
}

TEST_F(DiagnoseFlow, ExitCodesFollowTheOutcome) {
  TargetOutcome partial = Diagnosed("busy-wait-hang");
  partial.diagnosis.playbooks[0].errors.push_back("timeout");
  EXPECT_EQ(Run(partial), kDiagnosedPartly);
  TargetOutcome wrong = Diagnosed("busy-wait-hang");
  wrong.diagnosis.tsdb_matches_log = false;
  wrong.diagnosis.tsdb_check = "tb_step 50, the log 900";
  EXPECT_EQ(Run(wrong), kDiagnosedPartly);
  EXPECT_NE(err_.str().find("wrong TSDB?"), std::string::npos);
  TargetOutcome missing;
  missing.status = TargetOutcome::Status::kInputError;
  missing.error = "no diag dir for job 4242";
  EXPECT_EQ(Run(missing), 2);
  EXPECT_NE(err_.str().find("no diag dir for job 4242"), std::string::npos);
  TargetOutcome closed;
  closed.status = TargetOutcome::Status::kAccessError;
  closed.error = "prometheus did not start";
  out_.str("");
  EXPECT_EQ(Run(closed), 1);
  EXPECT_TRUE(out_.str().empty());  // no report on failure
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A hang with one host's GPUs, as the diagnosis hands it over with --html.
TargetOutcome WithPicture(TargetOutcome outcome) {
  auto& d = outcome.diagnosis;
  d.context.job_range = {1000, 1600};
  d.context.hosts = {"n1"};
  for (int64_t step = 0; step < 30; ++step) d.context.steps.push_back({step, 1000 + 10.0 * step});
  d.context.triage.primary_class = "hang";
  d.context.triage.hang_start = 1290;
  diagnose::Series util{{{"host", "n1"}, {"gpu", "0"}}, {}}, power = util;
  for (double t = 1000; t <= 1600; t += 5) {
    util.samples.push_back({t, 97});
    power.samples.push_back({t, t < 1290 ? 650.0 : 300.0});
  }
  d.picture = diagnose::DiagnosisPicture(d, {util}, {power});
  return outcome;
}

TEST_F(DiagnoseFlow, HtmlPageBesideTheReport) {
  const fs::path html = config_.string() + ".html";
  args_.html_path = html.string();
  EXPECT_EQ(Run(WithPicture(Diagnosed("busy-wait-hang"))), 0) << err_.str();
  ASSERT_TRUE(seen_);
  EXPECT_TRUE(seen_->picture) << "--html asks the diagnosis for the chart's series";
  EXPECT_NE(out_.str().find("## TSDB Diagnosis: 4242"), std::string::npos) << "stdout as before";
  const std::string page = ReadAll(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u) << page.substr(0, 200);
  EXPECT_EQ(Count(page, "data:image/png;base64,iVBORw0KGgo"), 1u) << "one PNG, drawn by gnuplot";
  EXPECT_NE(page.find("<title>Job 4242: hang busy-wait-hang</title>"), std::string::npos);
  EXPECT_NE(page.find("## TSDB Diagnosis: 4242"), std::string::npos) << "the report's text";
  EXPECT_EQ(page.find("http://"), std::string::npos) << "nothing to fetch";
  EXPECT_EQ(page.find("https://"), std::string::npos) << "nothing to fetch";
  EXPECT_NE(err_.str().find("wrote " + html.string()), std::string::npos) << err_.str();
  // A shell's `>` would give 0666 less the umask: no more for the page.
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(static_cast<mode_t>(fs::status(html).permissions()), 0666 & ~mask);
  fs::remove(html);
}

TEST_F(DiagnoseFlow, NoGnuplotStillWritesThePageAndKeepsTheExitCode) {
  const fs::path html = config_.string() + ".html";
  args_.html_path = html.string();
  args_.gnuplot = "/nonexistent/gnuplot";
  TargetOutcome partial = WithPicture(Diagnosed("busy-wait-hang"));
  partial.diagnosis.playbooks[0].errors.push_back("timeout");
  EXPECT_EQ(Run(partial), kDiagnosedPartly);
  EXPECT_NE(err_.str().find("warning: no chart in " + html.string() + ": /nonexistent/gnuplot"),
            std::string::npos)
      << err_.str();
  const std::string page = ReadAll(html);
  EXPECT_EQ(page.find("data:image/png"), std::string::npos);
  EXPECT_NE(page.find("No chart: /nonexistent/gnuplot"), std::string::npos) << page;
  EXPECT_NE(page.find("## TSDB Diagnosis: 4242"), std::string::npos);
  fs::remove(html);
}

TEST_F(DiagnoseFlow, AnHtmlPathThatCannotBeWritten) {
  // Nowhere to write: refused before the diagnosis runs.
  args_.html_path = "/nonexistent-jobmon-dir/page.html";
  EXPECT_EQ(Run(Diagnosed("busy-wait-hang")), 2);
  EXPECT_FALSE(seen_) << "no diagnosis for a page that cannot be written";
  EXPECT_NE(err_.str().find("--html: cannot write in /nonexistent-jobmon-dir"), std::string::npos)
      << err_.str();
  args_.html_path = fs::temp_directory_path().string();
  EXPECT_EQ(Run(Diagnosed("busy-wait-hang")), 2);
  EXPECT_FALSE(seen_);
  // Its directory gone while the diagnosis ran: the report is printed, exit 1.
  const fs::path dir = config_.string() + ".d";
  fs::create_directory(dir);
  args_.html_path = (dir / "page.html").string();
  int code = RunDiagnose(
      args_,
      [&](const TargetRequest&) {
        fs::remove_all(dir);
        return Diagnosed("busy-wait-hang");
      },
      out_, err_);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out_.str().find("## TSDB Diagnosis: 4242"), std::string::npos);
  EXPECT_NE(err_.str().find("error: --html: cannot create a temp file in"), std::string::npos)
      << err_.str();
  // The monitor's run is JSON for the monitor alone.
  args_.html_path = (fs::temp_directory_path() / "x.html").string();
  args_.for_monitor = true;
  EXPECT_EQ(BuildRequest(args_).ok(), false);
}

// `jobmon diagnose` as root read a user's diag dir as root (a FIFO, a link
// to root's files, the manifest's own uid); it now becomes the owner of
// what it was given before reading any of it. In a forked child: the test
// process keeps its own identity.
TEST(BecomeTargetsUser, RootReadsAUsersDiagDirAsThatUserOnly) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  char pattern[] = "/tmp/jobmon-become-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string diag = pattern;
  ASSERT_EQ(chown(diag.c_str(), 65534, 65534), 0);
  DiagnoseArgs args;
  args.target = diag;
  pid_t pid = fork();
  if (pid == 0) {
    auto became = BecomeTargetsUser(args);
    const bool dropped = became && getuid() == 65534 && geteuid() == 65534 && getgid() == 65534 &&
                         getgroups(0, nullptr) <= 1;
    _exit(dropped ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  fs::remove_all(diag);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(BecomeTargetsUser, AJobIdSlurmDoesNotListIsReadAsNobody) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  DiagnoseArgs args;
  args.target = "4294967295";  // no such job (and no such file here)
  pid_t pid = fork();
  if (pid == 0) {
    auto became = BecomeTargetsUser(args);
    _exit(became && getuid() == 65534 && geteuid() == 65534 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// The monitor's child prints the report as JSON whatever the outcome.
TEST(DiagnoseForMonitor, PrintsTheReportJsonEvenOnFailure) {
  DiagnoseArgs args;
  args.target = "/nowhere";
  args.for_monitor = true;
  args.config_path = "/dev/null";
  std::ostringstream out, err;
  auto failing = [](const TargetRequest& r) {
    TargetOutcome o;
    o.status = r.job_ended ? TargetOutcome::Status::kInputError : TargetOutcome::Status::kDiagnosed;
    o.error = "nothing there";
    return o;
  };
  RunDiagnose(args, failing, out, err);
  auto report = diagnose::ParseReportJson(out.str());
  ASSERT_TRUE(report) << out.str();
  EXPECT_EQ(report->status, TargetOutcome::Status::kInputError) << "job_ended was set";
  EXPECT_EQ(report->error, "nothing there");
}

}  // namespace
}  // namespace jobmon::cli
