// `jobmon check`: each problem it is meant to find, found with the file and
// line that hold it, and a clean installation passing; the parsing of
// plugstack.conf; and the real binary's output and exit codes.

#include "config_check.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jobmon/common/run_command.h"
#include "plugstack_file.h"

namespace jobmon::cli {
namespace {

namespace fs = std::filesystem;

bool Has(const std::vector<std::string>& problems, const std::string& part) {
  for (const auto& p : problems) {
    if (p.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& problems) {
  std::string text;
  for (const auto& p : problems) text += p + "\n";
  return text;
}

TEST(PlugstackText, DirectivesArgumentsCommentsAndBadLinesWithTheirNumbers) {
  auto parsed = ParsePlugstackText(
      "# a comment\n"
      "optional /usr/lib/slurm/spank_diag.so exporter=/bin/x  compression=3 # trailing\n"
      "\n"
      "include plugstack.conf.d/*.conf\n"
      "required\n"
      "sometimes other.so\n");
  ASSERT_EQ(parsed.lines.size(), 2u);
  EXPECT_EQ(parsed.lines[0].line, 2);
  EXPECT_EQ(parsed.lines[0].directive, "optional");
  EXPECT_EQ(parsed.lines[0].path, "/usr/lib/slurm/spank_diag.so");
  EXPECT_EQ(parsed.lines[0].args, (std::vector<std::string>{"exporter=/bin/x", "compression=3"}));
  EXPECT_EQ(parsed.lines[1].directive, "include");
  EXPECT_EQ(parsed.lines[1].line, 4);
  ASSERT_EQ(parsed.errors.size(), 2u);
  EXPECT_EQ(parsed.errors[0].first, 5);
  EXPECT_EQ(parsed.errors[1].first, 6);
  EXPECT_NE(parsed.errors[1].second.find("'sometimes'"), std::string::npos);
}

TEST(PlugstackText, TheDiagPluginByFileNameAndTheDefaultFile) {
  EXPECT_TRUE(IsDiagPlugin("/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_diag.so"));
  EXPECT_TRUE(IsDiagPlugin("spank_diag.so"));
  EXPECT_FALSE(IsDiagPlugin("/usr/lib/spank_pyxis.so"));
  EXPECT_EQ(DefaultPlugstackPath(nullptr), "/etc/slurm/plugstack.conf");
  EXPECT_EQ(DefaultPlugstackPath(""), "/etc/slurm/plugstack.conf");
  EXPECT_EQ(DefaultPlugstackPath("/tmp/dc/etc/slurm.conf"), "/tmp/dc/etc/plugstack.conf");
}

TEST(CheckRules, WritableByOwnerGroupOtherAndRoot) {
  struct stat st {};
  st.st_uid = 1000;
  st.st_gid = 2000;
  st.st_mode = S_IFDIR | 0750;
  EXPECT_TRUE(WritableBy(st, {"owner", 1000, {1000}}));
  EXPECT_FALSE(WritableBy(st, {"member", 1001, {2000}}));
  EXPECT_FALSE(WritableBy(st, {"other", 1002, {1002}}));
  EXPECT_TRUE(WritableBy(st, {"root", 0, {0}}));
  st.st_mode = S_IFDIR | 0770;
  EXPECT_TRUE(WritableBy(st, {"member", 1001, {2000}}));
  st.st_mode = S_IFDIR | 0507;  // owner bits win over other's, as the kernel judges
  EXPECT_FALSE(WritableBy(st, {"owner", 1000, {1000}}));
}

TEST(CheckRules, ProgramsMustBeRegularAndExecutableByOthers) {
  struct stat st {};
  st.st_mode = S_IFREG | 0755;
  EXPECT_EQ(ProgramProblem(st), "");
  st.st_mode = S_IFREG | 0750;
  EXPECT_NE(ProgramProblem(st).find("not executable by other users (mode 0750"), std::string::npos);
  st.st_mode = S_IFDIR | 0755;
  EXPECT_EQ(ProgramProblem(st), "not a regular file");
}

class CheckFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-check-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    for (const char* name : {"exporter", "supervise", "archive", "prometheus"}) {
      Write("bin/" + std::string(name), "#!/bin/sh\n", 0755);
    }
    auto me = LookUpAccount(getpwuid(geteuid())->pw_name);
    ASSERT_TRUE(me);
    me_ = *me;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    const std::string path = (dir_ / name).string();
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  // A plugstack.conf with the diag plugin's line and `extra` arguments.
  std::string Plugstack(const std::string& extra) {
    const std::string bin = (dir_ / "bin").string();
    return Write("plugstack.conf",
                 "optional /nonexistent/spank_diag.so exporter=" + bin + "/exporter supervisor=" +
                     bin + "/supervise archiver=" + bin + "/archive prometheus=" + bin +
                     "/prometheus run_dir=" + (dir_ / "run").string() + " " + extra + "\n");
  }

  fs::path dir_;
  AccountIds me_;
};

TEST_F(CheckFiles, ACleanPluginLinePasses) {
  auto problems = CheckPlugstack(Plugstack("compression=5"));
  // Only the plugin's own path, which this test does not build.
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_NE(problems[0].find("plugstack.conf:1: /nonexistent/spank_diag.so: no such file"),
            std::string::npos)
      << problems[0];
}

TEST_F(CheckFiles, BadArgumentsAreTheParsersMessagesAtTheirLine) {
  auto bad_value = CheckPlugstack(Plugstack("compression=99"));
  EXPECT_TRUE(Has(bad_value,
                  "plugstack.conf:1: plugstack.conf argument compression=99: expected "
                  "an integer in 1..19"))
      << Joined(bad_value);
  auto unknown = CheckPlugstack(Plugstack("compresion=5"));
  EXPECT_TRUE(Has(unknown, "plugstack.conf:1: unknown plugstack.conf argument 'compresion'"))
      << Joined(unknown);
}

TEST_F(CheckFiles, ProgramsAndRunDirItNames) {
  fs::remove(dir_ / "bin/archive");
  chmod((dir_ / "bin/exporter").c_str(), 0700);
  Write("run", "not a directory");
  auto problems = CheckPlugstack(Plugstack(""));
  EXPECT_TRUE(
      Has(problems, "archiver=" + (dir_ / "bin/archive").string() + ": No such file or directory"))
      << Joined(problems);
  EXPECT_TRUE(Has(
      problems, "exporter=" + (dir_ / "bin/exporter").string() + ": not executable by other users"))
      << Joined(problems);
  EXPECT_TRUE(Has(problems, "run_dir=" + (dir_ / "run").string() + ": not a directory"))
      << Joined(problems);
  EXPECT_FALSE(Has(problems, "supervisor=")) << Joined(problems);
  // The exporter's scontrol (listpids), named or Slurm's default.
  auto scontrol = CheckPlugstack(Plugstack("scontrol=" + (dir_ / "bin/scontrol").string()));
  EXPECT_TRUE(
      Has(scontrol, "scontrol=" + (dir_ / "bin/scontrol").string() + ": No such file or directory"))
      << Joined(scontrol);
}

TEST_F(CheckFiles, IncludesAreFollowedRelativeToTheIncludingFileOnce) {
  const std::string main =
      Write("etc/plugstack.conf", "include plugstack.conf.d/*.conf\ninclude plugstack.conf\n");
  Write("etc/plugstack.conf.d/other.conf", "optional /usr/lib/spank_other.so\n");
  Write("etc/plugstack.conf.d/diag.conf", "\n\noptional spank_diag.so keep_tsdb=maybe\n");
  auto problems = CheckPlugstack(main);
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_NE(problems[0].find("plugstack.conf.d/diag.conf:3: plugstack.conf argument "
                             "keep_tsdb=maybe: expected on or off"),
            std::string::npos)
      << problems[0];
}

TEST_F(CheckFiles, NoDiagLineOrNoFileIsAProblem) {
  auto none = CheckPlugstack(Write("plugstack.conf", "optional /usr/lib/spank_other.so\n"));
  EXPECT_TRUE(Has(none, "no spank_diag.so line")) << Joined(none);
  auto missing = CheckPlugstack((dir_ / "absent.conf").string());
  EXPECT_TRUE(Has(missing, "absent.conf: cannot read")) << Joined(missing);
}

TEST_F(CheckFiles, SecretsFileModeOwnerAndEveryNamedSecret) {
  alerts::AlertsConfig config;
  config.secrets_file = Write("secrets.toml", "ops_token = \"abcdef\"\n", 0644);
  alerts::ReceiverConfig webhook;
  webhook.kind = "webhook";
  webhook.name = "ops";
  webhook.bearer_token_secret = "ops_token";
  webhook.basic_password_secret = "ops_password";
  alerts::ReceiverConfig telegram;
  telegram.kind = "telegram";
  telegram.name = "tg";
  telegram.bot_token_secret = "tg_token";
  config.receivers = {webhook, telegram};

  auto wide = CheckSecrets(config, "jobmon.toml", me_);
  EXPECT_TRUE(Has(wide, "readable by others (mode 0644)")) << Joined(wide);
  chmod(config.secrets_file.c_str(), 0600);
  AccountIds someone_else = me_;
  someone_else.uid = me_.uid + 1;
  auto foreign = CheckSecrets(config, "jobmon.toml", someone_else);
  EXPECT_TRUE(Has(foreign, "is not owned by the user reading it")) << Joined(foreign);

  auto missing = CheckSecrets(config, "jobmon.toml", me_);
  ASSERT_EQ(missing.size(), 2u) << Joined(missing);
  EXPECT_TRUE(Has(missing, "jobmon.toml: receiver ops: secret 'ops_password'"));
  EXPECT_TRUE(Has(missing, "jobmon.toml: receiver tg: secret 'tg_token'"));
  EXPECT_FALSE(Has(missing, "abcdef")) << "a secret's value is never shown";

  Write("secrets.toml", "ops_token = \"abcdef\"\nops_password = \"ghijkl\"\n", 0600);
  setenv("JOBMON_SECRET_TG_TOKEN", "from-the-environment", 1);
  auto clean = CheckSecrets(config, "jobmon.toml", me_);
  unsetenv("JOBMON_SECRET_TG_TOKEN");
  EXPECT_TRUE(clean.empty()) << Joined(clean);
}

TEST_F(CheckFiles, StateDbDirectoryMustExistAndBeWritableByTheMonitor) {
  auto absent = CheckStateDb((dir_ / "nope/state.db").string(), me_);
  EXPECT_TRUE(Has(absent, "directory " + (dir_ / "nope").string() + ": No such file"))
      << Joined(absent);
  fs::create_directories(dir_ / "state");
  chmod((dir_ / "state").c_str(), 0755);
  const std::string db = (dir_ / "state/state.db").string();
  EXPECT_TRUE(CheckStateDb(db, me_).empty()) << Joined(CheckStateDb(db, me_));
  AccountIds nobody{"nobody-here", 65534, {65534}};
  if (me_.uid != 65534) {
    auto refused = CheckStateDb(db, nobody);
    EXPECT_TRUE(Has(refused, "is not writable by nobody-here (mode 0755)")) << Joined(refused);
  }
}

TEST_F(CheckFiles, SlurmAskedAsTheMonitorAsksIt) {
  monitor::MonitorConfig config;
  // Jobs from `squeue -t all --json`; nodes from `scontrol show nodes --json`
  // (23.02+), from `sinfo --json` where `scontrol --version` says 22.05.
  config.squeue = Write(
      "squeue", "#!/bin/sh\n[ \"$*\" = '-t all --json' ] || exit 9\necho '{\"jobs\": []}'\n", 0755);
  config.scontrol = Write("scontrol",
                          "#!/bin/sh\ncase \"$*\" in\n"
                          "  --version) echo 'slurm 25.11.7' ;;\n"
                          "  'show nodes --json') echo '{\"nodes\": []}' ;;\n"
                          "  *) exit 9 ;;\nesac\n",
                          0755);
  config.sinfo = Write("sinfo", "#!/bin/sh\nexit 9\n", 0755);
  config.slurm_timeout = 5;
  EXPECT_TRUE(CheckSlurm(config).empty()) << Joined(CheckSlurm(config));
  Write("scontrol",
        "#!/bin/sh\n[ \"$1\" = --version ] && echo 'slurm-wlm 22.05.8' && exit 0\nexit 9\n", 0755);
  Write("sinfo", "#!/bin/sh\n[ \"$*\" = --json ] || exit 9\necho '{\"nodes\": []}'\n", 0755);
  EXPECT_TRUE(CheckSlurm(config).empty()) << Joined(CheckSlurm(config));
  Write("squeue", "#!/bin/sh\nexit 1\n", 0755);
  Write("sinfo", "#!/bin/sh\nexec sleep 10\n", 0755);
  config.slurm_timeout = 0.3;
  auto problems = CheckSlurm(config);
  EXPECT_TRUE(Has(problems, "Slurm: " + config.squeue + " exited with 1")) << Joined(problems);
  EXPECT_TRUE(Has(problems, "Slurm: " + config.sinfo + " did not answer within"))
      << Joined(problems);
  // 22.05's squeue with slurmctld down: exit 0, errors and no jobs.
  Write("squeue",
        "#!/bin/sh\necho '{\"errors\": [{\"error\": \"Unable to contact slurm controller "
        "(connect failure)\", \"errno\": 1007}], \"jobs\": []}'\n",
        0755);
  config.slurm_timeout = 5;
  problems = CheckSlurm(config);
  EXPECT_TRUE(Has(problems, "Slurm: " + config.squeue +
                                ": Unable to contact slurm controller (connect failure)"))
      << Joined(problems);
}

// A plugin built for one Slurm series under another: Slurm's loader would
// refuse it and --diag=on jobs would be refused at submit. The marker is
// what spank/spank_diag.cc puts in the .so.
TEST(SlurmUpgrade, APluginOfAnotherSeriesIsAProblemAPatchReleaseIsNot) {
  const std::string so = std::string(
                             "\x7f"
                             "ELF...") +
                         "jobmon-spank-built-for-slurm=0x160508;" + std::string("...", 3);
  ASSERT_EQ(PluginSlurmVersion(so), 0x160508u);
  EXPECT_EQ(FormatSlurmVersion(0x160508), "22.05.8");
  EXPECT_EQ(FormatSlurmVersion(0x190b07), "25.11.7");
  EXPECT_FALSE(PluginSlurmVersion("no marker here"));
  EXPECT_FALSE(PluginSlurmVersion("jobmon-spank-built-for-slurm=0xzz;"));
  EXPECT_EQ(slurm::ParseSlurmVersion("slurm 25.11.7\n"), 0x190b07u);
  EXPECT_EQ(slurm::ParseSlurmVersion("slurm-wlm 22.05.8\n"), 0x160508u);
  EXPECT_FALSE(slurm::ParseSlurmVersion("sbatch: command not found"));
  auto same = SlurmUpgradeProblems("p:1", "/x/spank_diag.so", 0x160508,
                                   {{"sbatch", 0x16050a}, {"slurmd", 0x160508}});
  EXPECT_TRUE(same.empty()) << same.front();
  auto upgraded = SlurmUpgradeProblems("p:1", "/x/spank_diag.so", 0x160508,
                                       {{"sbatch", 0x190b07}, {"slurmd", 0x160508}});
  ASSERT_EQ(upgraded.size(), 1u);
  EXPECT_NE(upgraded[0].find("built for Slurm 22.05.8, but sbatch here is 25.11.7"),
            std::string::npos)
      << upgraded[0];
  EXPECT_NE(upgraded[0].find("refused at submit"), std::string::npos);
  EXPECT_NE(upgraded[0].find("for 25.11"), std::string::npos);
}

// The binary: the lines, the summary and the exit codes.
TEST_F(CheckFiles, TheCommandExitsZeroWhenCleanOneOnAProblemTwoOnUsage) {
  const std::string squeue = Write("squeue", "#!/bin/sh\necho '{\"jobs\": []}'\n", 0755);
  const std::string scontrol =
      Write("scontrol",
            "#!/bin/sh\n[ \"$1\" = --version ] && echo 'slurm 24.11.7' || echo '{\"nodes\": []}'\n",
            0755);
  fs::create_directories(dir_ / "state");
  const std::string config = Write(
      "jobmon.toml", "[monitor]\nstate_db = \"" + (dir_ / "state/state.db").string() +
                         "\"\nsqueue = \"" + squeue + "\"\nscontrol = \"" + scontrol + "\"\n");
  auto run = [&](const std::string& plugstack, const std::string& extra = "") {
    const std::string command = std::string("'") + JOBMON_CLI + "' check -c '" + config +
                                "' --plugstack '" + plugstack + "' --monitor-user '" + me_.name +
                                "' " + extra + " 2>&1";
    auto result = RunCommand({"/bin/sh", "-c", command}, std::chrono::seconds(20));
    EXPECT_TRUE(result.ok());
    return result.ok() ? *result : CommandResult{};
  };
  // The plugin's own path must exist for a clean run.
  const std::string plugstack = Plugstack("");
  std::string text;
  {
    std::ifstream in(plugstack);
    std::getline(in, text);
  }
  Write("lib/spank_diag.so", "");
  const std::string so = (dir_ / "lib/spank_diag.so").string();
  Write("plugstack.conf", text.replace(text.find("/nonexistent/spank_diag.so"),
                                       std::string("/nonexistent/spank_diag.so").size(), so) +
                              "\n");
  auto clean = run(plugstack);
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_NE(clean.output.find("jobmon check: no problems (config " + config), std::string::npos)
      << clean.output;

  Write("plugstack.conf", text + " scrape_interval=10ms\n");
  auto broken = run(plugstack);
  EXPECT_EQ(broken.exit_code, 1) << broken.output;
  EXPECT_NE(broken.output.find("jobmon check: " + plugstack +
                               ":1: plugstack.conf argument scrape_interval=10ms"),
            std::string::npos)
      << broken.output;
  EXPECT_NE(broken.output.find("jobmon check: 1 problem ("), std::string::npos) << broken.output;

  auto usage = run(plugstack, "--no-such-flag");
  EXPECT_EQ(usage.exit_code, 2) << usage.output;
}

}  // namespace
}  // namespace jobmon::cli
