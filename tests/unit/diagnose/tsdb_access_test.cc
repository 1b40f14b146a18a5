// ResolveTarget against temp dirs, the copy made for serving, and how a
// live TSDB is recognised (tsdb_access.h, tsdb_local.h).
#include "jobmon/diagnose/tsdb_access.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "access/port_scan.h"
#include "access/tsdb_local.h"
#include "diagnose_test_support.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/diagnose/prom_http.h"

namespace jobmon::diagnose {
namespace {

using testing::FakeBlock;
using testing::TempDir;
using testing::Write;
namespace fs = std::filesystem;

constexpr const char* kBlockA = "01HZZZZZZZZZZZZZZZZZZZZZZA";
constexpr const char* kBlockB = "01HZZZZZZZZZZZZZZZZZZZZZZB";

// A string with NULs, as /proc/<pid>/cmdline.
template <size_t N>
std::string Nul(const char (&text)[N]) {
  return std::string(text, N - 1);
}

Manifest SomeManifest(const std::string& diag_dir) {
  Manifest m;
  m.job_id = 4242;
  m.user = "alice";
  m.head_node = "node001";
  m.diag_dir = diag_dir;
  m.state = "archived";
  return m;
}

TEST(TsdbLocal, BlockNamesAndRanges) {
  EXPECT_TRUE(IsBlockDirName(kBlockA));
  EXPECT_FALSE(IsBlockDirName("01HZZZZZZZZZZZZZZZZZZZZZZI"));  // no I in Crockford's base32
  EXPECT_FALSE(IsBlockDirName("wal"));
  TempDir dir;
  FakeBlock(dir.path, kBlockB, 5000, 9000);
  FakeBlock(dir.path, kBlockA, 1000, 4000);
  fs::create_directories(dir.path / "wal");
  auto tsdb = InspectTsdb(dir.path);
  ASSERT_TRUE(tsdb) << tsdb.error().message;
  ASSERT_EQ(tsdb->blocks.size(), 2u);
  EXPECT_EQ(tsdb->blocks[0].ulid, kBlockA);
  EXPECT_FALSE(tsdb->has_wal);  // an empty wal/ holds nothing
  Write(dir.path / "wal" / "00000000", "segment");
  EXPECT_TRUE(InspectTsdb(dir.path)->has_wal);
  auto range = LocalTsdbRange(dir.path);
  ASSERT_TRUE(range && *range);
  EXPECT_DOUBLE_EQ((*range)->start, 1);
  EXPECT_DOUBLE_EQ((*range)->end, 9);
}

TEST(TsdbLocal, WalOnlyHasNoRangeOnDisk) {
  TempDir dir;
  Write(dir.path / "wal" / "00000000", "segment");
  auto tsdb = InspectTsdb(dir.path);
  ASSERT_TRUE(tsdb);
  EXPECT_FALSE(tsdb->empty());
  auto range = LocalTsdbRange(dir.path);
  ASSERT_TRUE(range);
  EXPECT_FALSE(*range);
}

TEST(ResolveTarget, DiagDirWithManifestAndArchive) {
  TempDir dir;
  const std::string diag = (dir.path / "jobmon-diag-4242").string();
  DiagLayout layout{diag};
  fs::create_directories(diag);
  Write(layout.archive(), "not really zstd");
  Manifest m = SomeManifest(diag);
  ArchiveInfo archive;
  archive.path = layout.archive();
  archive.sha256 = std::string(64, 'a');
  m.archive = archive;
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  auto target = ResolveTarget(diag + "/");
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->kind, TargetKind::kDiagDir);
  EXPECT_EQ(target->job_id, "4242");
  EXPECT_EQ(target->diag_dir, diag);
  EXPECT_EQ(target->archive_path, layout.archive());
  EXPECT_EQ(target->tsdb_dir, "");
  ASSERT_TRUE(target->manifest);
  // The raw TSDB, when kept, is preferred to unpacking.
  FakeBlock(layout.tsdb_dir(), kBlockA, 0, 1000);
  EXPECT_EQ(ResolveTarget(diag)->tsdb_dir, layout.tsdb_dir());
}

TEST(ResolveTarget, TheManifestsJobLogOnlyWhenItIsTheDiagDirOwnersOwnFile) {
  TempDir dir;
  const std::string diag = (dir.path / "jobmon-diag-4242").string();
  DiagLayout layout{diag};
  fs::create_directories(diag);
  const std::string log = (dir.path / "slurm-4242.out").string();
  Write(log, "step 1\n");
  Manifest m = SomeManifest(diag);
  m.uid = getuid();
  m.job_log = log;
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  EXPECT_EQ(ResolveTarget(diag)->log_path, log);
  // A link, even to the job user's own file.
  const std::string link = (dir.path / "link.out").string();
  fs::create_symlink(log, link);
  m.job_log = link;
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  EXPECT_EQ(ResolveTarget(diag)->log_path, "");
}

// The manifest's "uid" is its writer's word: `"uid":0` with a root-owned
// job_log and tsdb_dir made root triage that file and serve that TSDB.
TEST(ResolveTarget, TheManifestsUidDoesNotChooseWhoseFilesAreRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the diag dir is given to another user";
  TempDir dir;
  const std::string diag = (dir.path / "jobmon-diag-4243").string();
  DiagLayout layout{diag};
  fs::create_directories(diag);
  ASSERT_EQ(chown(diag.c_str(), 65534, 65534), 0);  // the job's user: nobody
  // Root's own files, standing in for /etc/shadow and another job's TSDB.
  const std::string roots_file = (dir.path / "root-only.txt").string();
  Write(roots_file, "secret\n");
  const fs::path roots_tsdb = dir.path / "root-tsdb";
  FakeBlock(roots_tsdb, kBlockA, 0, 1000);
  Manifest m = SomeManifest(diag);
  m.uid = 0;
  m.job_log = roots_file;
  m.tsdb_dir = roots_tsdb.string();
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  auto target = ResolveTarget(diag);
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->log_path, "");
  EXPECT_EQ(target->tsdb_dir, "");
}

TEST(ResolveTarget, PathsTheManifestNamesOutsideTheDiagDirAreNotTaken) {
  TempDir dir;
  const std::string diag = (dir.path / "jobmon-diag-4242").string();
  DiagLayout layout{diag};
  fs::create_directories(diag);
  const std::string elsewhere = (dir.path / "someone-elses.tar.zst").string();
  Write(elsewhere, "x");
  Manifest m = SomeManifest(diag);
  m.uid = getuid();
  ArchiveInfo archive;
  archive.path = elsewhere;
  archive.sha256 = std::string(64, 'a');
  m.archive = archive;
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  EXPECT_EQ(ResolveTarget(diag)->archive_path, "");
  // The diag dir's own archive, but not as a link to another file.
  fs::create_symlink(elsewhere, layout.archive());
  EXPECT_EQ(ResolveTarget(diag)->archive_path, "");
  fs::remove(layout.archive());
  Write(layout.archive(), "x");
  EXPECT_EQ(ResolveTarget(diag)->archive_path, layout.archive());
  // A TSDB directory named by the manifest, as a link: not copied.
  FakeBlock((dir.path / "real-tsdb").string(), kBlockA, 0, 1000);
  fs::create_directory_symlink(dir.path / "real-tsdb", dir.path / "tsdb-link");
  m.tsdb_dir = (dir.path / "tsdb-link").string();
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  EXPECT_EQ(ResolveTarget(diag)->tsdb_dir, "");
  m.tsdb_dir = (dir.path / "real-tsdb").string();
  ASSERT_TRUE(WriteManifest(layout.manifest(), m));
  EXPECT_EQ(ResolveTarget(diag)->tsdb_dir, m.tsdb_dir);
}

TEST(ResolveTarget, ArchiveFileTakesTheManifestBesideIt) {
  TempDir dir;
  DiagLayout layout{dir.path.string()};
  Write(layout.archive(), "x");
  ASSERT_TRUE(WriteManifest(layout.manifest(), SomeManifest(layout.dir)));
  auto target = ResolveTarget(layout.archive());
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->kind, TargetKind::kArchive);
  EXPECT_EQ(target->archive_path, layout.archive());
  EXPECT_EQ(target->job_id, "4242");
}

TEST(ResolveTarget, RawTsdbDir) {
  TempDir dir;
  Write(dir.path / "wal" / "00000001", "segment");
  auto target = ResolveTarget(dir.path.string());
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->kind, TargetKind::kTsdbDir);
  EXPECT_EQ(target->tsdb_dir, dir.path.string());
}

TEST(ResolveTarget, LogFindsTheDiagDirBesideIt) {
  TempDir dir;
  const fs::path log = dir.path / "train.out";
  Write(log, "banner\nSLURM_JOB_ID=777\nstep 1\n");
  EXPECT_EQ(JobIdOfLog(log.string()).value_or(""), "777");
  auto missing = ResolveTarget(log.string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("jobmon-diag-777"), std::string::npos)
      << missing.error().message;
  const fs::path diag = dir.path / "jobmon-diag-777";
  FakeBlock(diag / kTsdbDirName, kBlockA, 0, 1000);
  auto target = ResolveTarget(log.string());
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->kind, TargetKind::kLog);
  EXPECT_EQ(target->job_id, "777");
  EXPECT_EQ(target->log_path, log.string());
  EXPECT_EQ(target->tsdb_dir, (diag / kTsdbDirName).string());
  // Without a header the number in the name is the job id.
  const fs::path slurm = dir.path / "slurm-31337.out";
  Write(slurm, "no header\n");
  EXPECT_EQ(JobIdOfLog(slurm.string()).value_or(""), "31337");
}

// The header is read from a 64 KiB prefix first, then from kJobIdHeadBytes:
// a header line past the first prefix, or cut by it, is still read whole,
// and only within the first 200 lines.
TEST(ResolveTarget, AJobIdPastTheFirstPrefixIsStillRead) {
  TempDir dir;
  const std::string filler = std::string(999, 'x') + "\n";
  std::string text;
  for (int i = 0; i < 150; ++i) text += filler;
  Write(dir.path / "late.out", text + "SLURM_JOB_ID=4242\n");
  EXPECT_EQ(JobIdOfLog((dir.path / "late.out").string()).value_or(""), "4242");
  // Cut by the first prefix after "SLURM_JOB_ID=42": not read as 42.
  std::string straddling(size_t{64} << 10, 'y');
  straddling.replace(straddling.size() - 16, 1, "\n");
  straddling.replace(straddling.size() - 15, 15, "SLURM_JOB_ID=42");
  Write(dir.path / "cut.out", straddling + "77\n");
  EXPECT_EQ(JobIdOfLog((dir.path / "cut.out").string()).value_or(""), "4277");
  // Past the header's 200 lines: the file name's number.
  text.clear();
  for (int i = 0; i < 250; ++i) text += "line\n";
  Write(dir.path / "slurm-55.out", text + "SLURM_JOB_ID=4242\n");
  EXPECT_EQ(JobIdOfLog((dir.path / "slurm-55.out").string()).value_or(""), "55");
}

TEST(ResolveTarget, ErrorsNameWhatWasLookedAt) {
  TempDir dir;
  auto empty = ResolveTarget(dir.path.string());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("manifest.json"), std::string::npos);
  EXPECT_NE(empty.error().message.find("wal/"), std::string::npos);
  auto nothing = ResolveTarget((dir.path / "nope").string());
  ASSERT_FALSE(nothing);
  EXPECT_NE(nothing.error().message.find("nope"), std::string::npos);
  Write(dir.path / "manifest.json", "{not json");
  auto bad = ResolveTarget(dir.path.string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("manifest.json"), std::string::npos);
}

TEST(ResolveTarget, JobIdWithoutSlurmLooksHere) {
  TempDir dir;
  const fs::path old = fs::current_path();
  fs::current_path(dir.path);
  // Job 98765 is unknown to Slurm here (or there is no Slurm): the default
  // pattern's directory in the current one is the last place looked at.
  auto missing = ResolveTarget("98765");
  FakeBlock(dir.path / "jobmon-diag-98765" / kTsdbDirName, kBlockA, 0, 1000);
  auto found = ResolveTarget("98765");
  fs::current_path(old);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find((dir.path / "jobmon-diag-98765").string()),
            std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().message.find("squeue --json"), std::string::npos);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->kind, TargetKind::kJobId);
  EXPECT_EQ(found->job_id, "98765");
  EXPECT_EQ(found->tsdb_dir, (dir.path / "jobmon-diag-98765" / kTsdbDirName).string());
}

// Runs `body` in a forked child and says whether it finished within
// `seconds`: a call that blocks forever (a FIFO opened for reading) fails
// the test instead of hanging it.
bool FinishesWithin(int seconds, const std::function<void()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  for (int i = 0; i < seconds * 50; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    usleep(20'000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return false;
}

// A block's meta.json made a FIFO by the job's user held the root diagnosis
// (and then the daemon's shutdown) forever.
TEST(InspectTsdb, AFifoForMetaJsonIsSkippedNotWaitedOn) {
  TempDir dir;
  FakeBlock(dir.path, kBlockA, 1000, 4000);
  fs::create_directories(dir.path / kBlockB);
  ASSERT_EQ(mkfifo((dir.path / kBlockB / "meta.json").c_str(), 0600), 0);
  const std::string tsdb = dir.path.string();
  EXPECT_TRUE(FinishesWithin(10, [&] {
    auto found = InspectTsdb(tsdb);
    if (!found || found->blocks.size() != 1) _exit(1);
  }));
}

// A log named on the command line that is a FIFO: its job id comes from its
// name, its content is never waited for.
TEST(ResolveTarget, ALogThatIsAFifoIsNotWaitedOn) {
  TempDir dir;
  const std::string fifo = (dir.path / "slurm-4711.out").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(FinishesWithin(10, [&] {
    if (JobIdOfLog(fifo).value_or("") != "4711") _exit(1);
  }));
}

// The archive was checked with lstat and then unpacked by path: swapped
// for a link to another user's archive in between, that archive was served.
TEST(OpenTsdb, AnArchiveThatIsALinkIsRefusedNotFollowed) {
  TempDir dir;
  const std::string real = (dir.path / "victim.tar.zst").string();
  Write(real, "not read");
  const std::string link = (dir.path / "tsdb.tar.zst").string();
  fs::create_symlink(real, link);
  ResolvedTarget target;
  target.kind = TargetKind::kArchive;
  target.archive_path = link;
  AccessOptions options;
  options.temp_parent = dir.path.string();
  options.cleanup_on_signal = false;
  auto session = OpenTsdb(target, options);
  ASSERT_FALSE(session);
  EXPECT_NE(session.error().message.find("symlink"), std::string::npos) << session.error().message;
}

// The read-only Prometheus listens on loopback, which every local user
// reaches: without the diagnosis's one-time password it serves nothing.
TEST(OpenTsdb, TheReadOnlyPrometheusAnswersOnlyTheDiagnosisThatStartedIt) {
  if (access("/usr/bin/prometheus", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/prometheus";
  TempDir dir;
  const fs::path tsdb = dir.path / "tsdb";
  fs::create_directories(tsdb / "wal");
  // An empty WAL segment: zero pages are padding to Prometheus's reader.
  Write(tsdb / "wal" / "00000000", std::string(32 << 10, '\0'));
  ResolvedTarget target;
  target.kind = TargetKind::kTsdbDir;
  target.tsdb_dir = tsdb.string();
  AccessOptions options;
  options.temp_parent = dir.path.string();
  options.cleanup_on_signal = false;
  options.start_timeout = 60;
  auto session = OpenTsdb(target, options);
  ASSERT_TRUE(session) << session.error().message;
  const std::string url = session.value()->url();
  auto ours = session.value()->source().QueryInstant("vector(1)", 1.0);
  EXPECT_TRUE(ours) << "the diagnosis's own queries carry the password";
  PromHttpOptions without_password;
  without_password.timeout_seconds = 10;
  auto anyone = PromHttpSource(url, without_password).QueryInstant("vector(1)", 1.0);
  ASSERT_FALSE(anyone) << "another local user's query was answered";
  EXPECT_NE(anyone.error().message.find("401"), std::string::npos) << anyone.error().message;
}

TEST(ResolveTarget, DiagDirBesideStdOut) {
  EXPECT_EQ(DefaultDiagDirBeside("/home/a/run/slurm-5.out", "5"), "/home/a/run/jobmon-diag-5");
}

TEST(CopyTsdbForServing, LiveCopiesOnlyBlocks) {
  TempDir dir;
  const fs::path from = dir.path / "tsdb";
  FakeBlock(from, kBlockA, 0, 1000);
  Write(from / "wal" / "00000002", "wal");
  Write(from / "chunks_head" / "000001", "head");
  Write(from / "lock", "");
  Write(from / "queries.active", "");
  fs::create_symlink("/etc", from / "escape");
  ASSERT_TRUE(CopyTsdbForServing(from, dir.path / "live", true, true));
  EXPECT_TRUE(fs::exists(dir.path / "live" / kBlockA / "chunks" / "000001"));
  EXPECT_FALSE(fs::exists(dir.path / "live" / "wal"));
  EXPECT_FALSE(fs::exists(dir.path / "live" / "chunks_head"));
  EXPECT_FALSE(fs::exists(dir.path / "live" / "lock"));
  EXPECT_FALSE(fs::exists(dir.path / "live" / "escape"));
  ASSERT_TRUE(CopyTsdbForServing(from, dir.path / "done", false, false));
  EXPECT_TRUE(fs::exists(dir.path / "done" / "wal" / "00000002"));
  EXPECT_TRUE(fs::exists(dir.path / "done" / "chunks_head" / "000001"));
  EXPECT_FALSE(fs::exists(dir.path / "done" / "lock"));
  EXPECT_FALSE(fs::exists(dir.path / "done" / "queries.active"));
  // The first copy linked the block files, the second copied them.
  EXPECT_EQ(fs::hard_link_count(from / kBlockA / "index"), 2u);
  EXPECT_EQ(fs::hard_link_count(dir.path / "done" / kBlockA / "index"), 1u);
  // The source is untouched (its lock is never removed).
  EXPECT_TRUE(fs::exists(from / "lock"));
}

TEST(LiveServer, HeldLockMeansLive) {
  TempDir dir;
  FakeBlock(dir.path, kBlockA, 0, 1000);
  TempDir procfs;  // no processes
  EXPECT_FALSE(FindLiveServer(dir.path.string(), procfs.path.string()));
  Write(dir.path / "lock", "");
  EXPECT_FALSE(FindLiveServer(dir.path.string(), procfs.path.string()));  // a stale lock
  int fd = open((dir.path / "lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // Another open file description, as Prometheus's own: flock conflicts.
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_TRUE(FindLiveServer(dir.path.string(), procfs.path.string()));
  close(fd);
  EXPECT_FALSE(FindLiveServer(dir.path.string(), procfs.path.string()));
  EXPECT_TRUE(fs::exists(dir.path / "lock"));
}

TEST(LiveServer, PrometheusCommandLineNamingTheDir) {
  TempDir dir;
  TempDir procfs;
  const std::string cmdline = Nul("/usr/bin/prometheus\0--config.file=/x\0") +
                              "--storage.tsdb.path=" + dir.path.string() + "/" +
                              std::string(1, '\0');
  Write(procfs.path / "4321" / "cmdline", cmdline);
  Write(procfs.path / "99" / "cmdline",
        Nul("/bin/sleep\0--storage.tsdb.path=") + dir.path.string());
  auto live = FindLiveServer(dir.path.string(), procfs.path.string());
  ASSERT_TRUE(live);
  EXPECT_EQ(live->pid, 4321);
  EXPECT_EQ(TsdbPathOfCmdline(Nul("prometheus\0--storage.tsdb.path\0/d")).value_or(""), "/d");
  EXPECT_FALSE(TsdbPathOfCmdline(Nul("sleep\0--storage.tsdb.path=/d")));
}

TEST(OpenTsdb, ArchiveWithAnotherSha256IsRefused) {
  TempDir dir;
  DiagLayout layout{dir.path.string()};
  Write(layout.archive(), "tampered");
  Manifest m = SomeManifest(layout.dir);
  ArchiveInfo archive;
  archive.path = layout.archive();
  archive.sha256 = std::string(64, '0');
  m.archive = archive;
  ResolvedTarget target;
  target.kind = TargetKind::kArchive;
  target.archive_path = layout.archive();
  target.manifest = m;
  AccessOptions options;
  options.prometheus_binary = "/nonexistent/prometheus";  // never reached
  options.temp_parent = dir.path.string();
  options.cleanup_on_signal = false;
  auto session = OpenTsdb(target, options);
  ASSERT_FALSE(session);
  EXPECT_NE(session.error().message.find("sha256"), std::string::npos) << session.error().message;
  // Nothing was unpacked: no temp dir left beside the archive.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(OpenTsdb, RunningJobOutOfReachSaysHowToReachIt) {
  TempDir dir;
  auto port = FindFreeLoopbackPort(39190, 100);  // nothing answers there
  ASSERT_TRUE(port);
  Manifest m = SomeManifest(dir.path.string());
  m.state = "running";
  m.head_node = "far-away-head";
  m.prometheus_address = "127.0.0.1";
  m.prometheus_port = *port;
  m.tunnel_command = "ssh -J login -L 9190:localhost:9190 far-away-head";
  ResolvedTarget target;
  target.job_id = "4242";
  target.manifest = m;
  AccessOptions options;
  options.prometheus_binary = "/nonexistent/prometheus";  // never started for a live job
  options.temp_parent = dir.path.string();
  options.cleanup_on_signal = false;
  auto session = OpenTsdb(target, options);
  ASSERT_FALSE(session);
  EXPECT_NE(session.error().message.find(m.tunnel_command), std::string::npos)
      << session.error().message;
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(OpenTsdb, FailedStartRemovesItsTempDir) {
  TempDir dir;
  FakeBlock(dir.path / "tsdb", kBlockA, 0, 1000);
  ResolvedTarget target;
  target.kind = TargetKind::kTsdbDir;
  target.tsdb_dir = (dir.path / "tsdb").string();
  AccessOptions options;
  options.prometheus_binary = "/nonexistent/prometheus";
  options.temp_parent = (dir.path / "tmp").string();
  options.cleanup_on_signal = false;
  fs::create_directories(options.temp_parent);
  auto session = OpenTsdb(target, options);
  ASSERT_FALSE(session);
  EXPECT_NE(session.error().message.find("/nonexistent/prometheus"), std::string::npos)
      << session.error().message;
  EXPECT_TRUE(fs::is_empty(options.temp_parent));
}

}  // namespace
}  // namespace jobmon::diagnose
