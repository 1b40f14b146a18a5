#include "jobmon/common/daemon.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace jobmon {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

DaemonSpec Cmd(std::vector<std::string> argv) {
  DaemonSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jobmon-daemon-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (const ProcessIdentity& p : started_) StopDaemon(p, 100ms);
    fs::remove_all(dir_);
  }
  ProcessIdentity Spawn(DaemonSpec spec) {
    auto identity = SpawnDaemon(spec);
    EXPECT_TRUE(identity.ok()) << identity.error().message;
    if (!identity.ok()) return {};
    started_.push_back(*identity);
    return *identity;
  }
  static bool WaitUntil(const std::function<bool()>& condition) {
    for (int i = 0; i < 300; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  fs::path dir_;
  std::vector<ProcessIdentity> started_;
};

TEST_F(DaemonTest, DetachedFromUsWithDevNullStdinAndNoStrayFds) {
  // An fd of ours that the daemon must not inherit.
  std::ofstream leak(dir_ / "leak");
  ProcessIdentity p = Spawn(Cmd({"/bin/sleep", "30"}));
  ASSERT_GT(p.pid, 0);
  EXPECT_TRUE(IsSameProcessRunning(p));

  auto stat = ParseProcStat(Slurp("/proc/" + std::to_string(p.pid) + "/stat"));
  ASSERT_TRUE(stat);
  EXPECT_NE(stat->ppid, getpid()) << "double fork: not our child";
  EXPECT_NE(stat->session, getsid(0)) << "setsid: a session of its own";
  EXPECT_NE(stat->session, p.pid) << "second fork: not a session leader";

  std::string fd_dir = "/proc/" + std::to_string(p.pid) + "/fd";
  auto open_fds = [&] {
    std::vector<std::string> fds;
    for (const auto& entry : fs::directory_iterator(fd_dir)) fds.push_back(entry.path().filename());
    std::sort(fds.begin(), fds.end());
    return fds;
  };
  // The dynamic loader of the new program briefly holds fd 3 while it maps
  // libraries; judge the fds once sleep(1) is blocked in nanosleep. An
  // inherited fd would still be there then.
  auto settled = [&] {
    auto now = ParseProcStat(Slurp("/proc/" + std::to_string(p.pid) + "/stat"));
    return now && now->comm == "sleep" && now->state == 'S' && open_fds().size() == 3;
  };
  WaitUntil(settled);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(open_fds(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(fs::read_symlink(fd_dir + "/0"), "/dev/null");
  EXPECT_EQ(p.cmdline, std::string("/bin/sleep\0"
                                   "30\0",
                                   14));
}

TEST_F(DaemonTest, ResetsOomScoreAdj) {
  {
    std::ofstream own("/proc/self/oom_score_adj");
    own << "500";
  }
  if (Slurp("/proc/self/oom_score_adj") != "500\n")
    GTEST_SKIP() << "oom_score_adj not settable here";
  ProcessIdentity p = Spawn(Cmd({"/bin/sleep", "30"}));
  EXPECT_EQ(Slurp("/proc/" + std::to_string(p.pid) + "/oom_score_adj"), "0\n");
  std::ofstream("/proc/self/oom_score_adj") << "0";
}

TEST_F(DaemonTest, LogGetsStdoutAndStderrAndEnvIsExplicit) {
  std::string log = (dir_ / "daemon.log").string();
  DaemonSpec spec = Cmd({"/bin/sh", "-c", "echo out=$FOO; echo err >&2; pwd"});
  spec.env = std::vector<std::string>{"FOO=bar"};
  spec.log_path = log;
  spec.working_dir = dir_.string();
  ProcessIdentity p = Spawn(spec);
  ASSERT_TRUE(WaitUntil([&] { return !IsSameProcessRunning(p); }));
  ASSERT_TRUE(WaitUntil([&] { return Slurp(log).find(dir_.string()) != std::string::npos; }));
  EXPECT_EQ(Slurp(log), "out=bar\nerr\n" + dir_.string() + "\n");
}

TEST_F(DaemonTest, AGivenLogFdIsUsedInsteadOfThePath) {
  std::string log = (dir_ / "given.log").string();
  UniqueFd fd(open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640));
  ASSERT_TRUE(fd.valid());
  DaemonSpec spec = Cmd({"/bin/sh", "-c", "echo out; echo err >&2"});
  spec.log_fd = fd.get();
  spec.log_path = (dir_ / "unused.log").string();
  ProcessIdentity p = Spawn(spec);
  fd.reset();  // the daemon holds its own copy
  ASSERT_TRUE(WaitUntil([&] { return !IsSameProcessRunning(p); }));
  ASSERT_TRUE(WaitUntil([&] { return Slurp(log) == "out\nerr\n"; })) << Slurp(log);
  EXPECT_FALSE(fs::exists(dir_ / "unused.log"));
}

// service_user: the daemon runs as a user that cannot write where its log
// goes (the job's diag dir); the log is opened before the drop and handed over.
TEST_F(DaemonTest, ADaemonDroppedToAnotherUserWritesTheLogOpenedForIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  fs::path private_dir = dir_ / "private";
  fs::create_directories(private_dir);
  fs::permissions(private_dir, fs::perms::owner_all);
  DaemonSpec spec = Cmd({"/bin/sh", "-c", "id -u"});
  spec.uid = 65534;
  spec.gid = 65534;
  spec.log_path = (private_dir / "by-path.log").string();
  auto by_path = SpawnDaemon(spec);
  ASSERT_FALSE(by_path.ok()) << "nobody cannot create a log in a root-only directory";
  EXPECT_NE(by_path.error().message.find("open log file failed"), std::string::npos);

  auto log = OpenDaemonLog((private_dir / "given.log").string(), JobUser{0, 0});
  ASSERT_TRUE(log.ok()) << log.error().message;
  spec.log_fd = log->get();
  ProcessIdentity p = Spawn(spec);
  log.value().reset();
  ASSERT_TRUE(WaitUntil([&] { return !IsSameProcessRunning(p); }));
  ASSERT_TRUE(WaitUntil([&] { return Slurp((private_dir / "given.log").string()) == "65534\n"; }))
      << Slurp((private_dir / "given.log").string());
}

// The prolog hands the exporter its /dev/kmsg (--kmsg-fd N): that one
// descriptor survives the privilege drop and the exec under its number;
// any other inheritable one does not.
TEST_F(DaemonTest, TheInheritedDescriptorAloneSurvivesTheDropAndTheExec) {
  int handed[2], other[2];
  ASSERT_EQ(pipe2(handed, O_CLOEXEC), 0);  // close-on-exec, as the prolog opens it
  ASSERT_EQ(pipe(other), 0);               // inheritable, yet not to be inherited
  std::string n = std::to_string(handed[1]), m = std::to_string(other[1]);
  DaemonSpec spec = Cmd({"/bin/sh", "-c",
                         "echo through >&" + n + "; id -u; [ -e /proc/self/fd/" + m +
                             " ] && echo leaked || echo closed"});
  if (geteuid() == 0) {
    spec.uid = 65534;
    spec.gid = 65534;
  }
  spec.log_path = (dir_ / "inherit.log").string();
  if (geteuid() == 0) fs::permissions(dir_, fs::perms::all);  // nobody opens the log
  spec.inherit_fd = handed[1];
  ProcessIdentity p = Spawn(spec);
  close(handed[1]);
  close(other[1]);
  ASSERT_TRUE(WaitUntil([&] { return !IsSameProcessRunning(p); }));
  std::string expected_uid = geteuid() == 0 ? "65534" : std::to_string(geteuid());
  ASSERT_TRUE(WaitUntil([&] { return Slurp(spec.log_path) == expected_uid + "\nclosed\n"; }))
      << Slurp(spec.log_path);
  char buffer[32] = {};
  ssize_t got = read(handed[0], buffer, sizeof buffer - 1);
  EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<size_t>(got) : 0), "through\n");
  EXPECT_EQ(fcntl(handed[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "ours stays close-on-exec";
  close(handed[0]);
  close(other[0]);
}

TEST_F(DaemonTest, AnInheritedDescriptorMustBeOpenAndAboveStderr) {
  for (int fd : {0, 2, 1000}) {
    DaemonSpec spec = Cmd({"/bin/true"});
    spec.inherit_fd = fd;
    auto started = SpawnDaemon(spec);
    ASSERT_FALSE(started.ok()) << fd;
    EXPECT_NE(started.error().message.find("inherited fd"), std::string::npos);
  }
}

TEST_F(DaemonTest, OpenDaemonLogRefusesSymlinksFifosAndOtherOwnersFiles) {
  JobUser me{geteuid(), getegid()};
  // A symlink planted where the log goes: the target is left alone.
  std::string target = (dir_ / "target").string();
  std::ofstream(target) << "keep\n";
  fs::create_symlink(target, dir_ / "link.log");
  auto link = OpenDaemonLog((dir_ / "link.log").string(), me);
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.error().message.find("symlink"), std::string::npos) << link.error().message;
  fs::create_symlink(dir_ / "missing", dir_ / "dangling.log");
  EXPECT_FALSE(OpenDaemonLog((dir_ / "dangling.log").string(), me).ok());
  EXPECT_FALSE(fs::exists(dir_ / "missing")) << "a dangling symlink created its target";
  EXPECT_EQ(Slurp(target), "keep\n");

  // A FIFO: refused at once instead of waiting for a reader.
  ASSERT_EQ(mkfifo((dir_ / "fifo.log").c_str(), 0600), 0);
  auto started = std::chrono::steady_clock::now();
  auto fifo = OpenDaemonLog((dir_ / "fifo.log").string(), me);
  EXPECT_FALSE(fifo.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);

  // A directory in its place.
  fs::create_directories(dir_ / "dir.log");
  EXPECT_FALSE(OpenDaemonLog((dir_ / "dir.log").string(), me).ok());

  // A regular file: created, or appended to.
  auto fresh = OpenDaemonLog((dir_ / "fresh.log").string(), me);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  ASSERT_EQ(write(fresh->get(), "a\n", 2), 2);
  fresh.value().reset();
  auto again = OpenDaemonLog((dir_ / "fresh.log").string(), me);
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(write(again->get(), "b\n", 2), 2);
  EXPECT_EQ(Slurp((dir_ / "fresh.log").string()), "a\nb\n");
  EXPECT_EQ(fcntl(again->get(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(fcntl(again->get(), F_GETFD) & FD_CLOEXEC, 0);

  if (geteuid() != 0) return;
  // As root for a user: created under the user's identity, so it is theirs;
  // a file of anyone else there (e.g. a hard link) is refused.
  fs::path user_dir = dir_ / "user";
  fs::create_directories(user_dir);
  ASSERT_EQ(chown(user_dir.c_str(), 65534, 65534), 0);
  JobUser nobody{65534, 65534};
  auto created = OpenDaemonLog((user_dir / "exporter.log").string(), nobody);
  ASSERT_TRUE(created.ok()) << created.error().message;
  struct stat st {};
  ASSERT_EQ(fstat(created->get(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  // World-writable, so only the owner check stands between the user and it.
  std::ofstream(user_dir / "roots.log") << "root's\n";
  fs::permissions(
      user_dir / "roots.log",
      fs::perms::all & ~(fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec));
  auto roots = OpenDaemonLog((user_dir / "roots.log").string(), nobody);
  ASSERT_FALSE(roots.ok());
  EXPECT_NE(roots.error().message.find("owned by uid 0"), std::string::npos)
      << roots.error().message;
  // Where the user may not create files, neither may root on their behalf.
  fs::create_directories(dir_ / "root-only");
  fs::permissions(dir_ / "root-only", fs::perms::owner_all);
  EXPECT_FALSE(OpenDaemonLog((dir_ / "root-only" / "x.log").string(), nobody).ok());
  EXPECT_FALSE(fs::exists(dir_ / "root-only" / "x.log"));
}

TEST_F(DaemonTest, ReportsTheFailingStep) {
  auto missing = SpawnDaemon(Cmd({"/nonexistent/program"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("exec failed: No such file"), std::string::npos)
      << missing.error().message;

  DaemonSpec bad_dir = Cmd({"/bin/true"});
  bad_dir.working_dir = "/nonexistent-dir";
  auto chdir_failed = SpawnDaemon(bad_dir);
  ASSERT_FALSE(chdir_failed.ok());
  EXPECT_NE(chdir_failed.error().message.find("chdir failed"), std::string::npos);

  EXPECT_FALSE(SpawnDaemon({}).ok());
}

TEST_F(DaemonTest, DropsPrivileges) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  DaemonSpec spec = Cmd({"/bin/sleep", "30"});
  spec.uid = 65534;
  spec.gid = 65534;
  ProcessIdentity p = Spawn(spec);
  std::string status = Slurp("/proc/" + std::to_string(p.pid) + "/status");
  EXPECT_NE(status.find("Uid:\t65534\t65534\t65534\t65534"), std::string::npos) << status;
  EXPECT_NE(status.find("Gid:\t65534\t65534\t65534\t65534"), std::string::npos) << status;
  EXPECT_NE(status.find("Groups:\t65534"), std::string::npos) << status;
}

TEST_F(DaemonTest, StopTerminatesOurProcess) {
  ProcessIdentity p = Spawn(Cmd({"/bin/sleep", "30"}));
  auto outcome = StopDaemon(p, 2s);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(*outcome, StopOutcome::kTerminated);
  EXPECT_FALSE(IsSameProcessRunning(p));
  EXPECT_EQ(*StopDaemon(p, 2s), StopOutcome::kNotRunning) << "stopping twice is harmless";
}

TEST_F(DaemonTest, StopEscalatesToSigkill) {
  ProcessIdentity p = Spawn(Cmd({"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"}));
  std::this_thread::sleep_for(100ms);  // let the shell install its trap
  auto outcome = StopDaemon(p, 300ms);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(*outcome, StopOutcome::kKilled);
  EXPECT_FALSE(IsSameProcessRunning(p));
}

TEST_F(DaemonTest, NeverSignalsAReusedPid) {
  ProcessIdentity other = Spawn(Cmd({"/bin/sleep", "30"}));
  // The record of a process that is gone, whose pid now belongs to `other`:
  // same pid, different start time.
  ProcessIdentity stale = other;
  stale.start_time = other.start_time - 1;
  auto outcome = StopDaemon(stale, 100ms);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(*outcome, StopOutcome::kNotOurs);
  EXPECT_TRUE(IsSameProcessRunning(other)) << "the new owner of the pid was signalled";

  ProcessIdentity different_program = other;
  different_program.cmdline = std::string("/usr/bin/python3\0train.py\0", 26);
  EXPECT_EQ(*StopDaemon(different_program, 100ms), StopOutcome::kNotOurs);
  EXPECT_TRUE(IsSameProcessRunning(other));
}

// A real reuse: the kernel hands the pid of a stopped daemon to a new
// process (steered with ns_last_pid); the stale record must not touch it.
TEST_F(DaemonTest, NeverSignalsTheNewOwnerOfARealReusedPid) {
  if (geteuid() != 0 || access("/proc/sys/kernel/ns_last_pid", W_OK) != 0) {
    GTEST_SKIP() << "needs root and a writable ns_last_pid";
  }
  ProcessIdentity old_daemon = Spawn(Cmd({"/bin/sleep", "30"}));
  ASSERT_EQ(*StopDaemon(old_daemon, 2s), StopOutcome::kTerminated);
  ASSERT_TRUE(WaitUntil([&] { return !fs::exists("/proc/" + std::to_string(old_daemon.pid)); }))
      << "the stopped daemon was never reaped";
  std::optional<ProcessIdentity> new_owner;
  for (int attempt = 0; attempt < 50 && !new_owner; ++attempt) {
    // SpawnDaemon forks twice: the intermediate child takes pid-1, the
    // daemon the old pid. Other processes may race us; then we retry.
    std::ofstream("/proc/sys/kernel/ns_last_pid") << old_daemon.pid - 2;
    ProcessIdentity candidate = Spawn(Cmd({"/bin/sleep", "30"}));
    if (candidate.pid == old_daemon.pid) new_owner = candidate;
  }
  if (!new_owner) GTEST_SKIP() << "could not steer pid reuse (busy machine)";
  EXPECT_NE(new_owner->start_time, old_daemon.start_time);
  auto outcome = StopDaemon(old_daemon, 100ms);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(*outcome, StopOutcome::kNotOurs);
  EXPECT_TRUE(IsSameProcessRunning(*new_owner)) << "the new owner of the pid was signalled";
}

TEST_F(DaemonTest, GoneProcessIsNotRunning) {
  ProcessIdentity p = Spawn(Cmd({"/bin/true"}));
  ASSERT_TRUE(WaitUntil([&] { return !IsSameProcessRunning(p); }));
  auto outcome = StopDaemon(p, 100ms);
  ASSERT_TRUE(outcome.ok());
  if (*outcome == StopOutcome::kNotOurs) {
    // Once reaped, the pid may already belong to someone else: then "not
    // ours" is the right answer, and the new owner must really be another
    // process.
    auto now = ReadProcessIdentity(p.pid);
    if (now.ok()) {  // (it may be gone again)
      EXPECT_NE(now->start_time, p.start_time);
    }
  } else {
    EXPECT_EQ(*outcome, StopOutcome::kNotRunning);
  }
  EXPECT_FALSE(StopDaemon({1, 0, ""}, 100ms).ok()) << "pid 1 is never signalled";
}

TEST(PidRecord, RoundTripsAndRejectsGarbage) {
  ProcessIdentity p{4242, 987654321, ""};
  auto parsed = ParsePidRecord(FormatPidRecord(p));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->pid, 4242);
  EXPECT_EQ(parsed->start_time, 987654321u);
  for (const char* bad : {"", "42", "x 1", "42 y", "-1 5", "0 5", "42 5 extra", "42  5"}) {
    EXPECT_FALSE(ParsePidRecord(bad)) << bad;
  }
}

TEST(ReadProcessIdentity, MatchesOurselves) {
  auto self = ReadProcessIdentity(getpid());
  ASSERT_TRUE(self.ok());
  EXPECT_TRUE(IsSameProcessRunning(*self));
  EXPECT_FALSE(ReadProcessIdentity(0x7ffffff0).ok());
}

}  // namespace
}  // namespace jobmon
