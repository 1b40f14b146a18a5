// The --diag lifecycle's pure parts and its small processes: plugstack
// arguments, path patterns, prometheus.yml, the manifest, port
// reservations, the exporter supervisor, the TSDB archive.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include "archive/tsdb_archive.h"
#include "jobmon/common/fs_identity.h"
#include "jobmon/common/manifest.h"
#include "jobmon/common/target_file.h"
#include "jobmon/common/tunnel.h"
#include "jobmon/slurm/jobs.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"
#include "lifecycle/kmsg_handoff.h"
#include "lifecycle/local_tsdb.h"
#include "lifecycle/plugin_config.h"
#include "lifecycle/port_reservation.h"
#include "lifecycle/prometheus_config.h"
#include "lifecycle/remote_write.h"
#include "lifecycle/supervisor.h"
#include "spank/node_files.h"

namespace jobmon::lifecycle {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() /
             ("jobmon-lc-" + tag + "-" + std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

JobEnv TwoNodeJob() {
  std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", "4242"},
      {"SLURM_JOB_UID", "1000"},
      {"SLURM_JOB_GID", "1000"},
      {"SLURM_JOB_USER", "alice"},
      {"SLURMD_NODENAME", "node2"},
      {"SLURM_NODELIST", "node[1-2]"},
      {"SLURM_JOB_STDOUT", "/shared/%u/runs/%x-%j/slurm-%j.out"},
      {"SLURM_JOB_NAME", "llama"},
      {"SLURM_JOB_WORK_DIR", "/home/alice"},
      {"SLURM_CLUSTER_NAME", "tinygpu"},
      {"SLURM_CONF", "/etc/slurm-llnl/slurm.conf"}};
  return ReadJobEnv([env](const char* name) -> const char* {
           auto it = env.find(name);
           return it == env.end() ? nullptr : it->second.c_str();
         })
      .value();
}

TEST(PluginConfig, DefaultsAndEveryKey) {
  auto defaults = ParsePluginConfig({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->prometheus_port, 9190);
  EXPECT_EQ(defaults->exporter_port, 9400);
  EXPECT_EQ(defaults->scrape_interval, std::chrono::seconds(5));
  EXPECT_FALSE(defaults->default_on);
  EXPECT_EQ(defaults->scontrol, "/usr/bin/scontrol");
  auto config = ParsePluginConfig(
      {"prometheus=/opt/prom/prometheus", "scontrol=/opt/slurm/bin/scontrol", "exporter_port=9500",
       "prometheus_port=9290", "scrape_interval=15s", "private_cidrs=10.201.0.0/24,192.168.0.0/16",
       "archive=off", "compression=9", "keep_tsdb=on", "default=on",
       "remote_write=https://mimir.example/api/v1/push", "diag_dir=/scratch/%u/diag-%j",
       "epilog_wait=5s", "exporter_arg=--sysfs=/fake/%n"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->prometheus, "/opt/prom/prometheus");
  EXPECT_EQ(config->scontrol, "/opt/slurm/bin/scontrol");
  EXPECT_EQ(config->exporter_port, 9500);
  EXPECT_EQ(config->private_cidrs.size(), 2u);
  EXPECT_FALSE(config->archive);
  EXPECT_EQ(config->compression_level, 9);
  EXPECT_TRUE(config->keep_tsdb && config->default_on);
  EXPECT_EQ(config->exporter_args, std::vector<std::string>{"--sysfs=/fake/%n"});
}

TEST(PluginConfig, AnUnknownOrInvalidArgumentIsNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"promethues=/usr/bin/prometheus", "unknown plugstack.conf argument 'promethues'"},
      {"prometheus_port=80", "prometheus_port=80"},
      {"prometheus_port=abc", "expected an integer"},
      {"scrape_interval=5x", "invalid duration"},
      {"scrape_interval=100ms", "at least 1000ms"},
      {"archive=maybe", "expected on or off"},
      {"prometheus=relative/prom", "expected an absolute path"},
      {"scontrol=scontrol", "expected an absolute path"},
      {"private_cidrs=10.0.0.1/8", "private_cidrs"},
      {"remote_write=ftp://x", "http:// or https://"},
      // Copied into every job's manifest, which its user reads.
      {"remote_write=https://push:hunter2@mimir.example/api/v1/push", "credentials do not belong"},
      {"exporter_arg=--listen=0.0.0.0:1", "--listen is set by the plugin"},
      {"justaword", "is not key=value"},
  };
  for (auto [arg, message] : cases) {
    auto config = ParsePluginConfig({arg});
    ASSERT_FALSE(config.ok()) << arg;
    EXPECT_NE(config.error().message.find(message), std::string::npos)
        << arg << " -> " << config.error().message;
  }
}

TEST(JobEnvTest, ReadsSlurmdsVariablesAndNamesWhatIsMissing) {
  JobEnv job = TwoNodeJob();
  EXPECT_EQ(job.job_id, 4242u);
  EXPECT_EQ(job.nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(job.head_node(), "node1");
  EXPECT_FALSE(job.is_head());
  EXPECT_EQ(job.slurm_conf, "/etc/slurm-llnl/slurm.conf") << "for the exporter's scontrol";
  auto missing = ReadJobEnv([](const char* name) -> const char* {
    return std::string(name) == "SLURM_JOB_ID" ? "7" : nullptr;
  });
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("SLURM_JOB_UID"), std::string::npos);
  auto bad = ReadJobEnv([](const char* name) -> const char* {
    return std::string(name) == "SLURM_JOB_ID" ? "7x" : "1";
  });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a number"), std::string::npos);
}

TEST(DiagPaths, StdoutPathIsTheJobsLogForTheManifest) {
  JobEnv job = TwoNodeJob();
  job.stdout_path = "/shared/%u/runs/%x-%j/out-%j.log";
  job.job_name = "llama";
  EXPECT_EQ(StdoutPath(job), "/shared/alice/runs/llama-4242/out-4242.log");
  job.stdout_path = "slurm-%j.out";  // relative: in the work dir
  EXPECT_EQ(StdoutPath(job), "/home/alice/slurm-4242.out");
  job.stdout_path = "";  // no --output: Slurm's default
  EXPECT_EQ(StdoutPath(job), "/home/alice/slurm-4242.out");
  // The batch script is task 0 on node 0, as Slurm's own expansion of a
  // job's stdout says (slurm_pattern.h); before the patterns had one home
  // the plugin named no file here while squeue named out-0.log.
  job.stdout_path = "/shared/out-%t.log";
  EXPECT_EQ(StdoutPath(job), "/shared/out-0.log");
}

TEST(DiagPaths, DefaultIsBesideTheJobsStdoutWithPatternsExpanded) {
  JobEnv job = TwoNodeJob();
  EXPECT_EQ(StdoutDirectory(job), "/shared/alice/runs/llama-4242");
  auto layout = DiagLayoutFor(ParsePluginConfig({}).value(), job);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->dir, "/shared/alice/runs/llama-4242/jobmon-diag-4242");
  EXPECT_EQ(layout->target_file("node2"),
            "/shared/alice/runs/llama-4242/jobmon-diag-4242/targets/node2.json");
  job.stdout_path = "slurm-%j.out";  // relative: the work dir
  EXPECT_EQ(StdoutDirectory(job), "/home/alice");
  job.stdout_path = "/shared/%t/out";  // the batch step's task id, 0 (as squeue says)
  EXPECT_EQ(StdoutDirectory(job), "/shared/0");
  job.stdout_path = "";
  EXPECT_EQ(StdoutDirectory(job), "/home/alice");
  auto typo = DiagLayoutFor(ParsePluginConfig({"diag_dir=/x/%q"}).value(), job);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("unknown pattern %q"), std::string::npos);
  EXPECT_EQ(slurm_pattern::ExpandLetters("100%%-%j", {{'j', "1"}}).value(), "100%-1");
  EXPECT_FALSE(slurm_pattern::ExpandLetters("ends%", {}).ok());
  auto relative = DiagLayoutFor(ParsePluginConfig({"diag_dir=diag-%j"}).value(), job);
  EXPECT_FALSE(relative.ok());
}

// The plugin (from slurmd's environment) and the Slurm client (from
// squeue's JSON, which the daemon and the CLI read) give Slurm's filename
// patterns the same values, so both find the same diag dir: widths, array
// ids, the user and the job name.
TEST(DiagPaths, PluginAndSlurmClientReachTheSameDiagDir) {
  JobEnv env = TwoNodeJob();
  env.job_name = "llama";
  env.array_job_id = 4240;
  env.array_task_id = 2;
  env.stdout_path = "/shared/%u/%A_%a/out-%5j.log";
  slurm::SlurmJob squeued;
  squeued.job_id = env.job_id;
  squeued.array_job_id = 4240;
  squeued.array_task_id = 2;
  squeued.user = env.user;
  squeued.name = env.job_name;
  squeued.work_dir = env.work_dir;
  squeued.std_out = slurm::ExpandStdoutPattern(env.stdout_path, squeued);
  EXPECT_EQ(squeued.std_out, "/shared/alice/4240_2/out-04242.log");
  EXPECT_EQ(StdoutPath(env), squeued.std_out);
  for (const char* pattern : {"%o/jobmon-diag-%j", "/diag/%u/%x-%A_%3a", "/diag/%10j-%b"}) {
    auto plugin =
        DiagLayoutFor(ParsePluginConfig({std::string("diag_dir=") + pattern}).value(), env);
    ASSERT_TRUE(plugin.ok()) << pattern;
    auto daemon =
        slurm_pattern::ExpandDiagDir(pattern, slurm::PatternFields(squeued),
                                     slurm_pattern::DirectoryOf(squeued.std_out, squeued.work_dir));
    ASSERT_TRUE(daemon.ok()) << pattern;
    EXPECT_EQ(plugin->dir, *daemon) << pattern;
  }
  auto step_level = DiagLayoutFor(ParsePluginConfig({"diag_dir=/diag/%t"}).value(), env);
  ASSERT_FALSE(step_level.ok()) << "a per-task letter names no one diag dir";
}

TEST(PrometheusConfig, FileSdOverTheTargetsAndOptionalRemoteWrite) {
  JobEnv job = TwoNodeJob();
  auto config = ParsePluginConfig({"scrape_interval=15s"}).value();
  DiagLayout layout{"/d/diag"};
  std::string yml = RenderPrometheusConfig(config, job, layout);
  EXPECT_NE(yml.find("scrape_interval: 15s"), std::string::npos);
  EXPECT_NE(yml.find("scrape_timeout: 10s"), std::string::npos) << "capped below the interval";
  EXPECT_NE(yml.find("- files: [\"/d/diag/targets/*.json\"]"), std::string::npos);
  EXPECT_NE(yml.find("slurm_job_id: \"4242\""), std::string::npos);
  EXPECT_EQ(yml.find("remote_write"), std::string::npos);
  config.remote_write = "https://vm.example/api/v1/write";
  EXPECT_NE(RenderPrometheusConfig(config, job, layout)
                .find("remote_write:\n  - url: \"https://vm.example/api/v1/write\""),
            std::string::npos);
  EXPECT_EQ(RenderTargetFile("10.201.0.12:9400", "node2"),
            "[\n  {\n    \"labels\": {\n      \"host\": \"node2\"\n    },\n    \"targets\": [\n"
            "      \"10.201.0.12:9400\"\n    ]\n  }\n]\n");
}

TEST(PrometheusConfig, RemoteWriteCarriesClusterUserAndCredentialFilesAndPromtoolAcceptsIt) {
  JobEnv job = TwoNodeJob();
  EXPECT_EQ(job.cluster, "tinygpu");
  TempDir dir("rw");
  for (const char* name : {"token", "password", "ca.pem"}) {
    std::ofstream(dir.path / name) << "x\n";
  }
  DiagLayout layout{dir.path.string()};
  fs::create_directories(layout.targets_dir());
  auto bearer = ParsePluginConfig({"remote_write=https://mimir.example/api/v1/push",
                                   "remote_write_bearer_file=" + (dir.path / "token").string(),
                                   "remote_write_ca_file=" + (dir.path / "ca.pem").string()});
  ASSERT_TRUE(bearer.ok()) << bearer.error().message;
  std::string yml = RenderPrometheusConfig(*bearer, job, layout);
  EXPECT_NE(yml.find("    cluster: \"tinygpu\"\n    user: \"alice\"\n"), std::string::npos) << yml;
  EXPECT_NE(yml.find("    authorization:\n      type: Bearer\n      credentials_file: \"" +
                     (dir.path / "token").string() + "\""),
            std::string::npos)
      << yml;
  EXPECT_NE(yml.find("    tls_config:\n      ca_file: \"" + (dir.path / "ca.pem").string()),
            std::string::npos);
  EXPECT_EQ(yml.find("\nx\n"), std::string::npos) << "the secret itself is never copied";
  // The cluster argument wins over Slurm's name.
  auto basic = ParsePluginConfig(
      {"remote_write=https://vm.example/api/v1/write", "cluster=east", "remote_write_user=jobmon",
       "remote_write_password_file=" + (dir.path / "password").string()});
  ASSERT_TRUE(basic.ok()) << basic.error().message;
  std::string yml2 = RenderPrometheusConfig(*basic, job, layout);
  EXPECT_NE(yml2.find("cluster: \"east\""), std::string::npos);
  EXPECT_NE(yml2.find("    basic_auth:\n      username: \"jobmon\"\n      password_file: "),
            std::string::npos)
      << yml2;
  // Prometheus's own checker reads the files the config names.
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "no promtool";
  for (const std::string& text : {yml, yml2}) {
    std::ofstream(layout.prometheus_config()) << text;
    std::string cmd = "/usr/bin/promtool check config " + layout.prometheus_config() + " >" +
                      (dir.path / "promtool.out").string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << text << Read(dir.path / "promtool.out");
  }
}

// Ray's own metrics: a scrape job over the head exporter's Ray targets
// (common/ray_targets.h), which promtool accepts; none without the URL.
TEST(PrometheusConfig, RaysTargetsComeFromTheHeadExporter) {
  JobEnv job = TwoNodeJob();
  TempDir dir("ray");
  DiagLayout layout{dir.path.string()};
  fs::create_directories(layout.targets_dir());
  auto config = ParsePluginConfig({"scrape_interval=2s"}).value();
  EXPECT_EQ(config.ray_discovery, "/tmp/ray/prom_metrics_service_discovery.json");
  EXPECT_EQ(RenderPrometheusConfig(config, job, layout).find("job_name: ray"), std::string::npos);
  std::string yml = RenderPrometheusConfig(config, job, layout, "http://10.0.0.5:9400/ray/sd");
  EXPECT_NE(yml.find("  - job_name: ray\n    http_sd_configs:\n      - url: "
                     "\"http://10.0.0.5:9400/ray/sd\"\n        refresh_interval: 5s\n"),
            std::string::npos)
      << yml;
  EXPECT_TRUE(ParsePluginConfig({"ray_discovery=off"}).value().ray_discovery.empty());
  EXPECT_FALSE(ParsePluginConfig({"ray_discovery=relative/file.json"}).ok());
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "no promtool";
  std::ofstream(layout.prometheus_config()) << yml;
  std::string cmd = "/usr/bin/promtool check config " + layout.prometheus_config() + " >" +
                    (dir.path / "promtool.out").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << yml << Read(dir.path / "promtool.out");
}

// The exporter took connections from any host that reached its address
// (64 half-open ones made every scrape fail): it now takes only the
// scrapers, by default the cluster's own blocks.
TEST(PluginConfig, TheExporterIsToldWhoMayScrapeIt) {
  const IpAddress v4 = IpAddress::Parse("10.0.0.5").value();
  auto defaults = ParsePluginConfig({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(ExporterAllowArgs(*defaults, v4),
            (std::vector<std::string>{"--allow", "10.0.0.0/8", "--allow", "172.16.0.0/12",
                                      "--allow", "192.168.0.0/16"}));
  auto cluster = ParsePluginConfig({"private_cidrs=10.20.0.0/16"});
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(ExporterAllowArgs(*cluster, v4), (std::vector<std::string>{"--allow", "10.20.0.0/16"}));
  auto narrow =
      ParsePluginConfig({"private_cidrs=10.20.0.0/16", "scrapers=10.20.0.1/32,10.20.0.9/32"});
  ASSERT_TRUE(narrow.ok()) << narrow.error().message;
  EXPECT_EQ(ExporterAllowArgs(*narrow, v4),
            (std::vector<std::string>{"--allow", "10.20.0.1/32", "--allow", "10.20.0.9/32"}));
  EXPECT_TRUE(ExporterAllowArgs(*narrow, IpAddress::Parse("fd00::5").value()).empty());
  EXPECT_FALSE(ParsePluginConfig({"scrapers=10.20.0.1"}).ok());
}

// One credential for every job let any user write series labelled as
// another user's job; %u gives each user theirs, which the store's proxy
// ties to that user's `user` label (README "Central store").
TEST(PluginConfig, RemoteWriteCredentialsPerUser) {
  auto config =
      ParsePluginConfig({"remote_write=https://vm.example/api/v1/write", "remote_write_user=%u",
                         "remote_write_password_file=/etc/jobmon/remote-write/%u"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  auto alice = WithUserCredentials(*config, "alice");
  ASSERT_TRUE(alice.ok()) << alice.error().message;
  EXPECT_EQ(alice->remote_write_user, "alice");
  EXPECT_EQ(alice->remote_write_password_file, "/etc/jobmon/remote-write/alice");
  EXPECT_EQ(config->remote_write_user, "%u") << "the plugin's own config stays a pattern";
  auto other_letter = ParsePluginConfig({"remote_write=https://vm.example/api/v1/write",
                                         "remote_write_user=%j", "remote_write_password_file=/p"});
  ASSERT_TRUE(other_letter.ok());
  EXPECT_FALSE(WithUserCredentials(*other_letter, "alice").ok()) << "as every plugin pattern";
}

TEST(PluginConfig, RemoteWriteCredentialsAreOneKindAndTheTsdbDirIsLocalByDefault) {
  auto defaults = ParsePluginConfig({}).value();
  EXPECT_EQ(defaults.tsdb_dir, "/var/lib/jobmon/tsdb/%n/%j");
  EXPECT_EQ(defaults.tsdb_min_free_mb, 1024);
  EXPECT_FALSE(ParsePluginConfig({"remote_write_bearer_file=/t", "remote_write_user=u",
                                  "remote_write_password_file=/p"})
                   .ok());
  EXPECT_FALSE(ParsePluginConfig({"remote_write_user=u"}).ok());
  EXPECT_FALSE(ParsePluginConfig({"tsdb_dir=relative/%j"}).ok());
  EXPECT_TRUE(ParsePluginConfig({"tsdb_dir=%d/prometheus"}).ok());
  EXPECT_FALSE(ParsePluginConfig({"tsdb_min_free_mb=-1"}).ok());
}

TEST(SecretFiles, OnlyRootMayChangeThemAndOnlyACertificateMayBeWorldReadable) {
  const mode_t reg = S_IFREG;
  EXPECT_TRUE(CheckSecretFileMode("/t", 0, reg | 0600, SecretKind::kCredential).ok());
  EXPECT_TRUE(CheckSecretFileMode("/t", 0, reg | 0640, SecretKind::kCredential).ok());
  auto world = CheckSecretFileMode("/t", 0, reg | 0644, SecretKind::kCredential);
  ASSERT_FALSE(world.ok());
  EXPECT_NE(world.error().message.find("mode 0644"), std::string::npos);
  EXPECT_TRUE(CheckSecretFileMode("/ca", 0, reg | 0644, SecretKind::kCertificate).ok());
  EXPECT_FALSE(CheckSecretFileMode("/t", 1000, reg | 0600, SecretKind::kCredential).ok());
  EXPECT_FALSE(CheckSecretFileMode("/t", 0, reg | 0620, SecretKind::kCredential).ok());
  EXPECT_FALSE(CheckSecretFileMode("/ca", 0, reg | 0646, SecretKind::kCertificate).ok());
  EXPECT_FALSE(CheckSecretFileMode("/t", 0, S_IFLNK | 0600, SecretKind::kCredential).ok());
  if (geteuid() != 0) GTEST_SKIP() << "needs root (root-owned files, another user)";
  TempDir dir("secret");
  fs::permissions(dir.path, fs::perms(0755));
  std::ofstream(dir.path / "token") << "s3cret\n";
  fs::permissions(dir.path / "token", fs::perms(0600));
  // 0600 root's: right for root, but a job user's Prometheus cannot read it.
  EXPECT_TRUE(CheckSecretFile((dir.path / "token").string(), SecretKind::kCredential, 0, 0).ok());
  auto nobody =
      CheckSecretFile((dir.path / "token").string(), SecretKind::kCredential, 65534, 65534);
  ASSERT_FALSE(nobody.ok());
  EXPECT_NE(nobody.error().message.find("cannot read it"), std::string::npos);
  fs::create_symlink(dir.path / "token", dir.path / "link");
  EXPECT_FALSE(CheckSecretFile((dir.path / "link").string(), SecretKind::kCredential, 0, 0).ok());
}

TEST(LocalTsdb, TheDefaultIsOffTheSharedDiagDirAndPatternsExpand) {
  JobEnv job = TwoNodeJob();
  auto config = ParsePluginConfig({}).value();
  DiagLayout layout = DiagLayoutFor(config, job).value();
  auto tsdb = TsdbDirFor(config, layout, job);
  ASSERT_TRUE(tsdb.ok());
  EXPECT_EQ(*tsdb, "/var/lib/jobmon/tsdb/node2/4242");
  EXPECT_FALSE(IsInside(*tsdb, layout.dir));
  config.tsdb_dir = "%d/prometheus";
  EXPECT_EQ(TsdbDirFor(config, layout, job).value(), layout.tsdb_dir());
  EXPECT_TRUE(IsInside(layout.tsdb_dir(), layout.dir));
  EXPECT_FALSE(IsInside(layout.dir + "-other/x", layout.dir));
  config.tsdb_dir = "/var/lib/jobmon/%u/../%j";
  EXPECT_FALSE(TsdbDirFor(config, layout, job).ok());
  EXPECT_TRUE(CheckTrustedParent("/tmp", 0, S_IFDIR | 01777).ok());
  EXPECT_FALSE(CheckTrustedParent("/x", 0, S_IFDIR | 0777).ok());
  EXPECT_FALSE(CheckTrustedParent("/x", 1000, S_IFDIR | 0755).ok());
}

TEST(LocalTsdb, MadeForTheUserUnderRootOwnedParentsNeverThroughALinkAndRemovedWithoutFollowing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (root-owned parents, chown)";
  TempDir base("tsdb");
  fs::permissions(base.path, fs::perms(0755));
  const std::string path = (base.path / "tsdb/node1/77").string();
  auto made = PrepareLocalTsdb(path, 65534, 65534, 0);
  ASSERT_TRUE(made.ok()) << made.error().message;
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, 65534u);
  ASSERT_EQ(lstat((base.path / "tsdb/node1").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 022, 0u);
  // A stale dir of an earlier job with the same id is moved aside, not reused.
  std::ofstream(path + "/old-block") << "old";
  auto again = PrepareLocalTsdb(path, 65534, 65534, 0);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(again->moved_aside.empty());
  EXPECT_TRUE(fs::exists(again->moved_aside + "/old-block"));
  EXPECT_TRUE(fs::is_empty(path));
  // Not enough space: refused, saying how much there is.
  auto full =
      PrepareLocalTsdb((base.path / "tsdb/node1/78").string(), 65534, 65534, uint64_t{1} << 40);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().message.find("below tsdb_min_free_mb"), std::string::npos);
  EXPECT_FALSE(fs::exists(base.path / "tsdb/node1/78"));
  // A parent that is a symlink, or someone else's directory: refused.
  TempDir elsewhere("tsdb-target");
  fs::create_directories(base.path / "linked");
  fs::create_directory_symlink(elsewhere.path, base.path / "linked/node1");
  EXPECT_FALSE(PrepareLocalTsdb((base.path / "linked/node1/79").string(), 65534, 65534, 0).ok());
  EXPECT_FALSE(fs::exists(elsewhere.path / "79"));
  fs::create_directories(base.path / "users/node1");
  ASSERT_EQ(chown((base.path / "users/node1").c_str(), 65534, 65534), 0);
  auto occupied = PrepareLocalTsdb((base.path / "users/node1/80").string(), 65534, 65534, 0);
  ASSERT_FALSE(occupied.ok());
  EXPECT_NE(occupied.error().message.find("not owned by root"), std::string::npos);

  // Removal as the owner: a symlink inside is unlinked, its target kept; the
  // dir itself stays (its parent is root's) until root's rmdir.
  std::ofstream(elsewhere.path / "keep") << "keep";
  fs::create_directories(path + "/01ABC/chunks");
  std::ofstream(path + "/01ABC/chunks/000001") << "data";
  fs::create_directory_symlink(elsewhere.path, path + "/01ABC/escape");
  ASSERT_EQ(system(("chown -R -h 65534:65534 " + path).c_str()), 0);
  {
    FsIdentity as_owner(65534, 65534);
    auto removed = RemoveTreeNoFollow(path);
    EXPECT_TRUE(removed.ok()) << removed.error().message;
  }
  EXPECT_TRUE(fs::exists(elsewhere.path / "keep"));
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_TRUE(fs::is_empty(path));
  // The next prolog sweeps it once its job has no run dir.
  SweepEmptyTsdbDirs((base.path / "tsdb/node1").string(), [](uint32_t id) { return id != 77; });
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(again->moved_aside)) << "not a job id: never swept";
}

TEST(ManifestTest, RoundTripsAndRejectsOtherSchemas) {
  Manifest m;
  m.job_id = 4242;
  m.user = "alice";
  m.nodes = {"node1", "node2"};
  m.head_node = "node1";
  m.prometheus_address = "127.0.0.1";
  m.prometheus_port = 9191;
  m.tunnel_command = TunnelCommand("node1", 9191);
  m.tsdb_dir = "/var/lib/jobmon/tsdb/node1/4242";
  m.state = "archived";
  m.degraded = {"node2: no exporter: no cluster-private address"};
  m.archive = ArchiveInfo{"/d/tsdb.tar.zst", std::string(64, 'a'), 123, 3, false};
  std::string json = ToJson(m);
  EXPECT_NE(json.find("\"url\": \"http://127.0.0.1:9191\""), std::string::npos);
  EXPECT_EQ(m.tunnel_command, "ssh -N -L 9191:127.0.0.1:9191 node1");
  EXPECT_NE(json.find("\"tsdb_dir\": \"/var/lib/jobmon/tsdb/node1/4242\""), std::string::npos);
  auto back = ParseManifest(json);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ToJson(*back), json);
  EXPECT_FALSE(ParseManifest("{\"schema\": \"other/v9\"}").ok());
  EXPECT_FALSE(ParseManifest("not json").ok());
  EXPECT_FALSE(ParseManifest("{\"schema\": \"jobmon.manifest/v1\", \"job_id\": \"x\"}").ok());
}

TEST(PortReservationTest, ConcurrentJobsGetDifferentPortsAndBusyPortsAreSkipped) {
  TempDir run_root("ports");
  PluginConfig config;
  config.run_dir = run_root.path.string();
  auto loopback = IpAddress::Parse("127.0.0.1").value();
  // A port already in use (by us) is skipped.
  int busy = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(busy, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(busy, reinterpret_cast<sockaddr*>(&addr), &len);
  int base = ntohs(addr.sin_port);
  EXPECT_FALSE(PortIsFree(loopback, base));
  auto first = ReservePort(RunDirFor(config, "node1", 1), "prometheus", loopback, base, 50);
  auto second = ReservePort(RunDirFor(config, "node1", 2), "prometheus", loopback, base, 50);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first, base);
  EXPECT_NE(*first, *second) << "the first job's reservation counts before its daemon binds";
  // Another node's reservations are its own (its own network namespace).
  auto other = ReservePort(RunDirFor(config, "node2", 1), "prometheus", loopback, base, 50);
  EXPECT_EQ(*other, *first);
  auto exhausted = ReservePort(RunDirFor(config, "node1", 3), "prometheus", loopback, base, 1);
  ASSERT_FALSE(exhausted.ok());
  EXPECT_NE(exhausted.error().message.find("no free port"), std::string::npos);
  close(busy);
}

TEST(Supervisor, BackoffDoublesUpToTheCap) {
  SupervisorOptions options;
  options.initial_backoff = std::chrono::milliseconds(100);
  options.max_backoff = std::chrono::milliseconds(500);
  EXPECT_EQ(Backoff(options, 1).count(), 100);
  EXPECT_EQ(Backoff(options, 2).count(), 200);
  EXPECT_EQ(Backoff(options, 3).count(), 400);
  EXPECT_EQ(Backoff(options, 4).count(), 500);
  EXPECT_EQ(Backoff(options, 40).count(), 500);
}

// Runs the supervisor in a child process (it blocks signals and waits).
pid_t ForkSupervisor(const SupervisorOptions& options) {
  pid_t pid = fork();
  if (pid == 0) _exit(RunSupervisor(options));
  return pid;
}

// The exporter's --kmsg-fd reaches every exporter the supervisor starts,
// restarts included: the descriptor it inherited stays open across its execs.
TEST(Supervisor, EveryRestartGetsTheDescriptorTheSupervisorInherited) {
  TempDir dir("sup-fd");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // as SpawnDaemon leaves it: inheritable
  SupervisorOptions options;
  options.argv = {"/bin/sh", "-c", "echo run >&" + std::to_string(fds[1])};
  options.max_restarts = 2;
  options.initial_backoff = std::chrono::milliseconds(10);
  pid_t supervisor = ForkSupervisor(options);
  close(fds[1]);
  int status = 0;
  ASSERT_EQ(waitpid(supervisor, &status, 0), supervisor);
  std::string got;
  char buffer[64];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) got.append(buffer, n);
  close(fds[0]);
  EXPECT_EQ(got, "run\nrun\nrun\n") << "the first run and 2 restarts";
}

// The prolog opens the kernel log for the exporter only when the exporter
// could not (dmesg_restrict), and never as stdin/stdout/stderr.
// A process of the job's user could take the kernel log's descriptor from
// a supervisor or exporter started from a binary that user can read (it is
// dumpable from exec until its own prctl); the descriptor now goes only to
// programs the user cannot read, as the package installs them (0711).
TEST(KmsgHandoff, NotHandedToAProgramItsUserCanRead) {
  TempDir root("kmsg-programs");
  const std::string hidden = (root.path / "hidden").string();
  const std::string readable = (root.path / "readable").string();
  std::ofstream(hidden) << "#!/bin/sh\n";
  std::ofstream(readable) << "#!/bin/sh\n";
  ASSERT_EQ(chmod(hidden.c_str(), 0711), 0);
  ASSERT_EQ(chmod(readable.c_str(), 0755), 0);
  const uid_t user = geteuid() == 0 ? 65534 : geteuid() + 1;  // not the owner
  EXPECT_FALSE(WhyNotHandOverKmsg({hidden, hidden}, user, user));
  auto why = WhyNotHandOverKmsg({hidden, readable}, user, user);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find(readable + " is readable by uid"), std::string::npos) << *why;
  EXPECT_NE(why->find("0711"), std::string::npos) << *why;
  EXPECT_FALSE(WhyNotHandOverKmsg({readable}, 0, 0)) << "root could open the kernel log itself";
  EXPECT_TRUE(WhyNotHandOverKmsg({(root.path / "missing").string()}, user, user));
}

TEST(KmsgHandoff, OpensTheKernelLogOnlyUnderDmesgRestrict) {
  TempDir root("kmsg");
  fs::create_directories(root.path / "proc/sys/kernel");
  fs::create_directories(root.path / "dev");
  std::ofstream(root.path / "dev/kmsg") << "6,1,0,-;hello\n";
  auto restrict_to = [&](const char* value) {
    std::ofstream(root.path / "proc/sys/kernel/dmesg_restrict") << value;
  };
  std::string procfs = (root.path / "proc").string(), dev = (root.path / "dev").string();

  restrict_to("0\n");
  KmsgHandoff open_to_all = OpenKmsgForExporter(procfs, dev);
  EXPECT_FALSE(open_to_all.fd.valid()) << "the exporter opens it itself";
  EXPECT_EQ(open_to_all.note, "");

  restrict_to("1\n");
  KmsgHandoff restricted = OpenKmsgForExporter(procfs, dev);
  ASSERT_TRUE(restricted.fd.valid()) << restricted.note;
  EXPECT_GE(restricted.fd.get(), 3);
  EXPECT_EQ(fcntl(restricted.fd.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(fcntl(restricted.fd.get(), F_GETFL) & O_ACCMODE, O_RDONLY);

  fs::remove(root.path / "proc/sys/kernel/dmesg_restrict");  // unreadable: handed over too
  EXPECT_TRUE(OpenKmsgForExporter(procfs, dev).fd.valid());

  fs::remove(root.path / "dev/kmsg");
  KmsgHandoff missing = OpenKmsgForExporter(procfs, dev);
  EXPECT_FALSE(missing.fd.valid());
  EXPECT_NE(missing.note.find("GPU error detection is off"), std::string::npos) << missing.note;
}

TEST(Supervisor, AProgramThatKeepsCrashingIsRestartedThenGivenUp) {
  TempDir dir("sup");
  SupervisorOptions options;
  std::string count_file = (dir.path / "starts").string();
  options.argv = {"/bin/sh", "-c", "echo x >> " + count_file + "; exit 3"};
  options.max_restarts = 3;
  options.initial_backoff = std::chrono::milliseconds(20);
  options.status_file = (dir.path / "status").string();
  pid_t supervisor = ForkSupervisor(options);
  int status = 0;
  ASSERT_EQ(waitpid(supervisor, &status, 0), supervisor);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(Read(count_file), "x\nx\nx\nx\n") << "the first run and 3 restarts";
  EXPECT_EQ(Read(options.status_file), "gave up after 3 restarts: last exit code 3\n");
}

TEST(Supervisor, SigtermStopsTheChildAndNoListenerIsLeft) {
  TempDir dir("sup2");
  SupervisorOptions options;
  std::string pid_file = (dir.path / "child").string();
  // A child that ignores nothing and records its pid.
  options.argv = {"/bin/sh", "-c", "echo $$ > " + pid_file + "; exec sleep 60"};
  options.status_file = (dir.path / "status").string();
  pid_t supervisor = ForkSupervisor(options);
  std::string child;
  for (int i = 0; i < 200 && child.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    child = Read(pid_file);
  }
  ASSERT_FALSE(child.empty());
  pid_t child_pid = std::stoi(child);
  EXPECT_EQ(kill(child_pid, 0), 0);
  kill(supervisor, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(supervisor, &status, 0), supervisor);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(kill(child_pid, 0), 0) << "the child went with the supervisor";
  EXPECT_EQ(Read(options.status_file), "stopped\n");

  // SIGKILL of the supervisor: the child gets SIGTERM (PR_SET_PDEATHSIG).
  fs::remove(pid_file);
  supervisor = ForkSupervisor(options);
  child.clear();
  for (int i = 0; i < 200 && child.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    child = Read(pid_file);
  }
  ASSERT_FALSE(child.empty());
  child_pid = std::stoi(child);
  kill(supervisor, SIGKILL);
  waitpid(supervisor, &status, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gone = kill(child_pid, 0) != 0 ||
           Read("/proc/" + child + "/stat").find(") Z ") != std::string::npos;
  }
  EXPECT_TRUE(gone) << "orphaned child " << child_pid;
}

TEST(TsdbArchive, PacksAtomicallyAndGnuTarUnpacksTheSameFiles) {
  TempDir dir("arch");
  fs::path tsdb = dir.path / "prometheus";
  fs::create_directories(tsdb / "wal");
  fs::create_directories(tsdb / "01HZX" / "chunks");
  std::ofstream(tsdb / "wal" / "00000000") << std::string(300000, 'w');
  std::ofstream(tsdb / "01HZX" / "meta.json") << "{\"ulid\": \"01HZX\"}";
  std::ofstream(tsdb / "01HZX" / "chunks" / "000001") << std::string(70000, 'c');
  std::string archive = (dir.path / "tsdb.tar.zst").string();
  uint64_t last_files = 0;
  auto result = archive::ArchiveDirectory(tsdb.string(), "prometheus", archive, 3,
                                          [&](uint64_t files, uint64_t) { last_files = files; });
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->files, 3u);
  EXPECT_EQ(last_files, 3u);
  EXPECT_EQ(result->input_bytes, 300000u + 17u + 70000u);
  EXPECT_LT(result->bytes, 10000u) << "zstd compressed";
  EXPECT_EQ(result->sha256, archive::Sha256OfFile(archive).value());
  EXPECT_EQ(result->sha256.size(), 64u);
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
        << "no temp file left";
  }
  // An independent reader: GNU tar with the zstd program.
  fs::path out = dir.path / "out";
  fs::create_directories(out);
  std::string command = "tar --zstd -xf " + archive + " -C " + out.string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(Read(out / "prometheus" / "01HZX" / "meta.json"), "{\"ulid\": \"01HZX\"}");
  EXPECT_EQ(fs::file_size(out / "prometheus" / "wal" / "00000000"), 300000u);

  auto missing = archive::ArchiveDirectory((dir.path / "nope").string(), "prometheus",
                                           (dir.path / "x.tar.zst").string(), 3);
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(fs::exists(dir.path / "x.tar.zst"));
}

TEST(TsdbArchive, ARequeuedJobsEarlierRunsKeepTheirArchives) {
  TempDir dir("requeued");
  const DiagLayout layout{dir.path.string()};
  auto earlier = [&](unsigned run) { return layout.earlier_run_archive(run); };
  auto none = archive::KeepEarlierArchive(layout.archive(), earlier);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(*none, "") << "the first run: nothing to keep";
  for (const char* run : {"run 0", "run 1"}) {
    std::ofstream(layout.archive()) << run;
    auto kept = archive::KeepEarlierArchive(layout.archive(), earlier);
    ASSERT_TRUE(kept.ok()) << kept.error().message;
  }
  std::ofstream(layout.archive()) << "run 2";
  EXPECT_EQ(Read(layout.earlier_run_archive(0)), "run 0");
  EXPECT_EQ(Read(layout.earlier_run_archive(1)), "run 1");
  EXPECT_EQ(Read(layout.archive()), "run 2");
  EXPECT_EQ(layout.earlier_run_archive(1), dir.path.string() + "/tsdb.run1.tar.zst");

  fs::remove(layout.archive());
  fs::create_symlink(layout.earlier_run_archive(0), layout.archive());
  EXPECT_FALSE(archive::KeepEarlierArchive(layout.archive(), earlier).ok())
      << "a symlink is not an archive: left alone";
  EXPECT_EQ(Read(layout.earlier_run_archive(0)), "run 0");
}

}  // namespace
}  // namespace jobmon::lifecycle

namespace jobmon {
namespace {

TEST(FsIdentityTest, FilesAreCreatedAsTheUserAndRootOnlyPlacesAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  namespace fs = std::filesystem;
  fs::path root_only = fs::temp_directory_path() / ("jobmon-fsid-root-" + std::to_string(getpid()));
  fs::path shared = fs::temp_directory_path() / ("jobmon-fsid-shared-" + std::to_string(getpid()));
  fs::create_directories(root_only);
  fs::create_directories(shared);
  fs::permissions(root_only, fs::perms::owner_all);
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
  fs::create_symlink("/etc/passwd", shared / "trap");
  {
    FsIdentity nobody(65534, 65534);
    ASSERT_TRUE(nobody.active());
    EXPECT_LT(open((root_only / "x").c_str(), O_WRONLY | O_CREAT, 0644), 0) << "EACCES as nobody";
    int fd = open((shared / "mine").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    close(fd);
    EXPECT_LT(open((shared / "trap").c_str(), O_WRONLY | O_APPEND), 0)
        << "a symlink to a root-owned file opens with the user's rights";
  }
  struct stat st {};
  ASSERT_EQ(stat((shared / "mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  int fd = open((root_only / "y").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0) << "root again after the guard";
  if (fd >= 0) close(fd);
  fs::remove_all(root_only);
  fs::remove_all(shared);
}

// Root's supplementary groups stayed under setfsuid: a file open to one of
// root's groups (mode 0640, group root) was readable "as the user". Only
// the calling thread's groups change, and come back after.
TEST(FsIdentityTest, RootsSupplementaryGroupsDoNotComeAlong) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  namespace fs = std::filesystem;
  const gid_t extra = 4242;  // a supplementary group of root's, for this test
  std::vector<gid_t> before(static_cast<size_t>(getgroups(0, nullptr)));
  getgroups(static_cast<int>(before.size()), before.data());
  std::vector<gid_t> with_extra = before;
  with_extra.push_back(extra);
  ASSERT_EQ(syscall(SYS_setgroups, with_extra.size(), with_extra.data()), 0);
  const fs::path file =
      fs::temp_directory_path() / ("jobmon-fsid-group-" + std::to_string(getpid()));
  std::ofstream(file) << "group-only\n";
  ASSERT_EQ(chown(file.c_str(), 0, extra), 0);
  ASSERT_EQ(chmod(file.c_str(), 0640), 0);
  // A thread already running (as the daemon's others are) keeps its groups.
  std::promise<void> guard_on, looked;
  bool other_thread_kept = false;
  std::thread other([&] {
    guard_on.get_future().wait();
    std::vector<gid_t> groups(static_cast<size_t>(getgroups(0, nullptr)));
    getgroups(static_cast<int>(groups.size()), groups.data());
    other_thread_kept = std::find(groups.begin(), groups.end(), extra) != groups.end();
    looked.set_value();
  });
  {
    FsIdentity nobody(65534, 65534);
    int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_LT(fd, 0) << "read through root's supplementary group " << extra;
    if (fd >= 0) close(fd);
    guard_on.set_value();
    looked.get_future().wait();
  }
  other.join();
  EXPECT_TRUE(other_thread_kept) << "only the guard's thread changes groups";
  std::vector<gid_t> after(static_cast<size_t>(getgroups(0, nullptr)));
  getgroups(static_cast<int>(after.size()), after.data());
  EXPECT_EQ(after, with_extra) << "root's groups are back after the guard";
  ASSERT_EQ(syscall(SYS_setgroups, before.size(), before.data()), 0);
  fs::remove(file);
}

}  // namespace
}  // namespace jobmon

// What the prolog and epilog (root) read from places the job's
// user controls. node_files.cc is compiled into this test (it needs no Slurm).
namespace jobmon::spank {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;
namespace lc = jobmon::lifecycle;

constexpr JobUser kNobody{65534, 65534};

struct UserDir {
  fs::path path;
  explicit UserDir(const std::string& tag)
      : path(fs::temp_directory_path() /
             ("jobmon-h17-" + tag + "-" + std::to_string(getpid()) + "-" +
              std::to_string(steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path / "logs");
    if (geteuid() == 0) {
      (void)!chown(path.c_str(), kNobody.uid, kNobody.gid);
      (void)!chown((path / "logs").c_str(), kNobody.uid, kNobody.gid);
    }
  }
  ~UserDir() { fs::remove_all(path); }
  DiagLayout layout() const { return DiagLayout{path.string()}; }
};

JobUser Me() { return JobUser{geteuid(), getegid()}; }
JobUser TheUser() { return geteuid() == 0 ? kNobody : Me(); }

std::string Joined(const std::vector<NodeNote>& notes) {
  std::string out;
  for (const NodeNote& n : notes) out += n.node + ": " + n.line + "\n";
  return out;
}

TEST(UserControlledFiles, ADegradedNoteLinkedToARootOnlyFileIsNotRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a file the user cannot read)";
  UserDir user("notes-secret");
  fs::path secret_dir = user.path.string() + "-secret";
  fs::create_directories(secret_dir);
  std::ofstream(secret_dir / "secret") << "TOPSECRET-h17\n";
  fs::permissions(secret_dir / "secret", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(secret_dir / "secret", user.path / "logs" / "degraded-x.txt");
  // A hard link needs no symlink: a root-only file in the user's dir is
  // refused by its mode bits.
  fs::copy_file(secret_dir / "secret", user.path / "logs" / "degraded-y.txt");
  fs::permissions(user.path / "logs" / "degraded-y.txt", fs::perms::owner_read);
  std::ofstream(user.path / "logs" / "degraded-node2.txt") << "no exporter: reasons\n\n";
  (void)!chown((user.path / "logs" / "degraded-node2.txt").c_str(), kNobody.uid, kNobody.gid);

  std::string notes = Joined(ReadDegradedNotes(user.layout(), kNobody));
  EXPECT_EQ(notes.find("TOPSECRET"), std::string::npos) << notes;
  EXPECT_NE(notes.find("node2: no exporter: reasons\n"), std::string::npos) << notes;
  EXPECT_NE(notes.find("x: degraded note not read: "), std::string::npos) << notes;
  EXPECT_NE(notes.find("y: degraded note not read: "), std::string::npos) << notes;
  fs::remove_all(secret_dir);
}

TEST(UserControlledFiles, FifosDevicesAndHugeNotesNeitherHangNorExhaust) {
  UserDir user("notes-hostile");
  fs::path logs = user.path / "logs";
  ASSERT_EQ(mkfifo((logs / "degraded-fifo.txt").c_str(), 0666), 0);
  fs::create_symlink("/dev/zero", logs / "degraded-zero.txt");
  {
    std::ofstream big(logs / "degraded-big.txt");
    big << std::string(kMaxNoteFileBytes + 1, 'x');
  }
  {
    std::ofstream long_line(logs / "degraded-long.txt");
    long_line << std::string(5000, 'y') << "\n";
  }
  if (geteuid() == 0) {
    for (const char* name : {"degraded-fifo.txt", "degraded-big.txt", "degraded-long.txt"}) {
      (void)!lchown((logs / name).c_str(), kNobody.uid, kNobody.gid);
    }
  }
  auto started = steady_clock::now();
  auto notes = ReadDegradedNotes(user.layout(), TheUser());
  EXPECT_LT(steady_clock::now() - started, std::chrono::seconds(2));
  std::string text = Joined(notes);
  EXPECT_NE(text.find("fifo: degraded note not read: "), std::string::npos) << text;
  EXPECT_NE(text.find("zero: degraded note not read: "), std::string::npos) << text;
  EXPECT_NE(text.find("big: degraded note not read: "), std::string::npos) << text;
  EXPECT_NE(text.find("long: " + std::string(kMaxNoteLineBytes, 'y') + "...\n"), std::string::npos);
  EXPECT_LT(text.size(), 8192u);

  // Thousands of notes: a bounded number is read.
  for (int i = 0; i < 600; ++i) {
    std::ofstream(logs / ("degraded-n" + std::to_string(i) + ".txt")) << "a\nb\n";
  }
  if (geteuid() == 0) {
    for (const auto& entry : fs::directory_iterator(logs)) {
      (void)!lchown(entry.path().c_str(), kNobody.uid, kNobody.gid);
    }
  }
  EXPECT_EQ(ReadDegradedNotes(user.layout(), TheUser()).size(), kMaxNotes);

  // logs/ itself a symlink (to a dir of notes the user cannot list): nothing.
  fs::remove_all(logs);
  fs::create_symlink("/etc", logs);
  EXPECT_TRUE(ReadDegradedNotes(user.layout(), TheUser()).empty());
}

TEST(UserControlledFiles, TheManifestIsReadThroughTheOpener) {
  UserDir user("manifest");
  Manifest m;
  m.job_id = 7;
  m.state = "running";
  // A note with invalid UTF-8 (a line cut mid-character) is written, not thrown.
  m.degraded = {std::string("cut \xc3")};
  ASSERT_TRUE(WriteManifest(user.layout().manifest(), m).ok());
  if (geteuid() == 0) (void)!chown(user.layout().manifest().c_str(), kNobody.uid, kNobody.gid);
  UserFileOptions as_user{.user = TheUser(), .kind = UserFileKind::kRegular};
  auto read = ReadManifest(user.layout().manifest(), as_user);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->job_id, 7u);

  fs::remove(user.layout().manifest());
  ASSERT_EQ(mkfifo(user.layout().manifest().c_str(), 0666), 0);
  auto started = steady_clock::now();
  auto fifo = ReadManifest(user.layout().manifest(), as_user);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().message.find("FIFO"), std::string::npos) << fifo.error().message;
  EXPECT_LT(steady_clock::now() - started, std::chrono::seconds(2));

  fs::remove(user.layout().manifest());
  fs::create_symlink("/dev/zero", user.layout().manifest());
  EXPECT_FALSE(ReadManifest(user.layout().manifest(), as_user).ok());

  fs::remove(user.layout().manifest());
  std::ofstream(user.layout().manifest()) << std::string(kMaxManifestBytes + 1, ' ');
  EXPECT_FALSE(ReadManifest(user.layout().manifest(), as_user).ok());
}

// A non-root job's supervisor could not write its status into the
// root-owned run dir; the prolog now gives it a directory of its own.
TEST(UserControlledFiles, TheSupervisorOfAnotherUserReportsThroughItsOwnDirectory) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (drops to nobody)";
  lc::PluginConfig config;
  config.run_dir = (fs::temp_directory_path() / ("jobmon-h17-run-" + std::to_string(getpid())));
  lc::RunDir run = lc::RunDirFor(config, "node1", 77);
  fs::create_directories(run.dir);
  fs::permissions(run.node_dir, fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
  ASSERT_TRUE(MakeDirectoryFor(run.supervisor_dir(), kNobody.uid, kNobody.gid).ok());
  struct stat st {};
  ASSERT_EQ(lstat(run.supervisor_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody.uid);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  auto supervise_as_nobody = [&](const std::string& status_file) {
    pid_t pid = fork();
    if (pid == 0) {
      if (setgid(kNobody.gid) != 0 || setuid(kNobody.uid) != 0) _exit(99);
      lc::SupervisorOptions options;
      options.argv = {"/bin/false"};
      options.max_restarts = 1;
      options.initial_backoff = std::chrono::milliseconds(10);
      options.status_file = status_file;
      _exit(lc::RunSupervisor(options));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WEXITSTATUS(status);
  };
  // Where it used to write: refused, so "gave up" never reached the epilog.
  EXPECT_EQ(supervise_as_nobody(run.dir + "/exporter.status"), 1);
  EXPECT_FALSE(fs::exists(run.dir + "/exporter.status"));
  EXPECT_EQ(supervise_as_nobody(run.exporter_status()), 1);
  EXPECT_EQ(ReadExporterStatus(run).rfind("gave up after 1 restarts", 0), 0u)
      << ReadExporterStatus(run);

  // The status is the user's file: a symlink to a root-only file is not read.
  fs::remove(run.exporter_status());
  std::ofstream(run.dir + "/secret") << "gave up: TOPSECRET\n";
  fs::permissions(run.dir + "/secret", fs::perms::owner_read);
  fs::create_symlink(run.dir + "/secret", run.exporter_status());
  EXPECT_EQ(ReadExporterStatus(run), "");

  // Cleanup removes what the user left there without following it as root.
  fs::path outside = config.run_dir + "-outside";
  fs::create_directories(outside);
  std::ofstream(outside / "keep") << "keep\n";
  fs::create_directories(run.supervisor_dir() + "/sub");
  (void)!lchown((run.supervisor_dir() + "/sub").c_str(), kNobody.uid, kNobody.gid);
  fs::create_symlink(outside, run.supervisor_dir() + "/sub/link");
  RemoveRunDir(run);
  EXPECT_FALSE(fs::exists(run.dir));
  EXPECT_TRUE(fs::exists(outside / "keep"));
  fs::remove_all(outside);
  fs::remove_all(config.run_dir);
}

}  // namespace
}  // namespace jobmon::spank
