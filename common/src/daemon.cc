#include "jobmon/common/daemon.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "jobmon/common/close_fds.h"
#include "jobmon/common/fs_identity.h"

extern char** environ;

namespace jobmon {
namespace {

// What the forked children tell the parent through a close-on-exec pipe.
struct ChildReport {
  enum Kind : int { kStarted = 1, kFailed = 2 } kind;
  int step;  // index into kStepNames when kFailed
  int error_number;
  pid_t pid;
  uint64_t start_time;
};

enum Step : int {
  kSetsid,
  kFork,
  kSignals,
  kChdir,
  kStdin,
  kGroups,
  kGid,
  kUid,
  kLog,
  kStat,
  kInherit,
  kExec
};
constexpr const char* kStepNames[] = {
    "setsid",     "second fork", "signal reset", "chdir",         "open /dev/null",
    "setgroups",  "setgid",      "setuid",       "open log file", "read /proc/self/stat",
    "inherit fd", "exec"};

void WriteReport(int fd, const ChildReport& report) {
  ssize_t ignored = write(fd, &report, sizeof report);
  (void)ignored;
}

[[noreturn]] void FailChild(int fd, Step step) {
  WriteReport(fd, {ChildReport::kFailed, step, errno, getpid(), 0});
  _exit(127);
}

// Runs in the grandchild: only async-signal-safe calls from here to exec.
[[noreturn]] void ExecDaemon(int report_fd, const DaemonSpec& spec, char* const* argv,
                             char* const* envp) {
  if (report_fd < 3) {
    int moved = fcntl(report_fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0) _exit(127);
    report_fd = moved;
  }
  // A given log fd among 0-2 would be replaced by /dev/null below.
  int given_log_fd = spec.log_fd;
  if (given_log_fd >= 0 && given_log_fd < 3) {
    given_log_fd = fcntl(given_log_fd, F_DUPFD_CLOEXEC, 3);
    if (given_log_fd < 0) FailChild(report_fd, kLog);
  }
  sigset_t empty;
  sigemptyset(&empty);
  if (sigprocmask(SIG_SETMASK, &empty, nullptr) != 0) FailChild(report_fd, kSignals);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  // Best effort: a kernel without the file or a sandbox that refuses it is fine.
  int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (oom >= 0) {
    ssize_t ignored = write(oom, "0", 1);
    (void)ignored;
    close(oom);
  }
  umask(022);
  if (chdir(spec.working_dir.c_str()) != 0) FailChild(report_fd, kChdir);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0) FailChild(report_fd, kStdin);
  if (null_fd != STDIN_FILENO) close(null_fd);
  if (spec.uid) {
    gid_t gid = spec.gid.value_or(static_cast<gid_t>(*spec.uid));
    if (setgroups(1, &gid) != 0) FailChild(report_fd, kGroups);
    if (setgid(gid) != 0) FailChild(report_fd, kGid);
    if (setuid(*spec.uid) != 0) FailChild(report_fd, kUid);
  }
  // A path is opened after dropping privileges, so the log belongs to the
  // daemon's user; a given fd was opened by the caller as whoever owns the log.
  int log_fd = given_log_fd >= 0 ? given_log_fd
               : spec.log_path.empty()
                   ? open("/dev/null", O_WRONLY)
                   : open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0640);
  if (log_fd < 0 || dup2(log_fd, STDOUT_FILENO) < 0 || dup2(log_fd, STDERR_FILENO) < 0) {
    FailChild(report_fd, kLog);
  }
  if (log_fd > STDERR_FILENO && log_fd != spec.inherit_fd) close(log_fd);
  int keep[2] = {std::min(report_fd, spec.inherit_fd), std::max(report_fd, spec.inherit_fd)};
  CloseFdsFrom(3, keep);
  // The one descriptor the program is meant to get: open across its exec.
  if (spec.inherit_fd >= 0 && fcntl(spec.inherit_fd, F_SETFD, 0) != 0) {
    FailChild(report_fd, kInherit);
  }

  char stat_buffer[1024];
  int stat_fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t length = stat_fd >= 0 ? read(stat_fd, stat_buffer, sizeof stat_buffer) : -1;
  if (stat_fd >= 0) close(stat_fd);
  auto start_time = length > 0 ? ParseProcStatStartTime({stat_buffer, static_cast<size_t>(length)})
                               : std::nullopt;
  if (!start_time) FailChild(report_fd, kStat);
  WriteReport(report_fd, {ChildReport::kStarted, 0, 0, getpid(), *start_time});
  execve(argv[0], argv, envp);
  FailChild(report_fd, kExec);
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string JoinCmdline(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    out += arg;
    out.push_back('\0');
  }
  return out;
}

// Opens a pidfd so that the signal reaches the process we verified even if
// it exits and the pid is reused in between. -1 where pidfds are unsupported.
int OpenPidFd(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

bool SendSignal(int pidfd, pid_t pid, int sig) {
  if (pidfd >= 0) return syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
  return kill(pid, sig) == 0;
}

bool WaitGone(const ProcessIdentity& identity, const std::string& procfs,
              std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (IsSameProcessRunning(identity, procfs)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace

const char* ToString(StopOutcome outcome) {
  switch (outcome) {
    case StopOutcome::kNotRunning:
      return "not running";
    case StopOutcome::kNotOurs:
      return "pid reused by another process, left alone";
    case StopOutcome::kTerminated:
      return "terminated";
    case StopOutcome::kKilled:
      return "killed";
  }
  return "?";
}

Expected<UniqueFd> OpenDaemonLog(const std::string& path, const JobUser& owner) {
  UniqueFd fd;
  int open_errno = 0;
  {
    FsIdentity as_owner(owner.uid, owner.gid);
    fd.reset(open(path.c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                  0640));
    open_errno = errno;
  }
  if (!fd.valid()) {
    errno = open_errno;
    if (errno == ELOOP) return Error{path + ": refused: a symlink"};
    // ENXIO: a FIFO without a reader (O_NONBLOCK instead of waiting for one).
    if (errno == ENXIO) return Error{path + ": refused: a FIFO"};
    return Error{path + ": " + std::strerror(errno)};
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Error{path + ": " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return Error{path + ": refused: not a regular file"};
  if (st.st_uid != owner.uid) {
    return Error{path + ": refused: owned by uid " + std::to_string(st.st_uid) + ", not " +
                 std::to_string(owner.uid)};
  }
  // Blocking writes from here on: the daemon's stdout is an ordinary file.
  int flags = fcntl(fd.get(), F_GETFL);
  if (flags >= 0) fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Expected<ProcessIdentity> SpawnDaemon(const DaemonSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return Error{"daemon spec without a program"};
  if (spec.inherit_fd >= 0 && (spec.inherit_fd < 3 || fcntl(spec.inherit_fd, F_GETFD) < 0)) {
    return Error{"inherited fd " + std::to_string(spec.inherit_fd) +
                 ": not an open descriptor above stderr"};
  }
  // Everything that allocates happens before fork.
  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (spec.env) {
    for (const std::string& entry : *spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
  }
  char* const* env_pointer = spec.env ? envp.data() : environ;

  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0)
    return Error{std::string("pipe: ") + std::strerror(errno)};
  pid_t child = fork();
  if (child < 0) {
    int saved = errno;
    close(report_pipe[0]);
    close(report_pipe[1]);
    return Error{std::string("fork: ") + std::strerror(saved)};
  }
  if (child == 0) {
    close(report_pipe[0]);
    if (setsid() < 0) FailChild(report_pipe[1], kSetsid);
    pid_t grandchild = fork();
    if (grandchild < 0) FailChild(report_pipe[1], kFork);
    if (grandchild > 0) _exit(0);
    ExecDaemon(report_pipe[1], spec, argv.data(), env_pointer);
  }
  close(report_pipe[1]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::optional<ChildReport> started;
  std::optional<ChildReport> failed;
  ChildReport report{};
  ssize_t n;
  while ((n = read(report_pipe[0], &report, sizeof report)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof report)) break;
    (report.kind == ChildReport::kStarted ? started : failed) = report;
  }
  close(report_pipe[0]);
  if (failed) {
    return Error{"starting " + spec.argv[0] + ": " + kStepNames[failed->step] +
                 " failed: " + std::strerror(failed->error_number)};
  }
  if (!started) return Error{"starting " + spec.argv[0] + ": the child exited without a report"};
  return ProcessIdentity{started->pid, started->start_time, JoinCmdline(spec.argv)};
}

Expected<ProcessIdentity> ReadProcessIdentity(pid_t pid, const std::string& procfs) {
  std::string dir = procfs + "/" + std::to_string(pid);
  auto stat_text = ReadWholeFile(dir + "/stat");
  if (!stat_text) return Error{"no process " + std::to_string(pid)};
  auto stat = ParseProcStat(*stat_text);
  if (!stat) return Error{"unparsable " + dir + "/stat"};
  return ProcessIdentity{pid, stat->start_time, ReadWholeFile(dir + "/cmdline").value_or("")};
}

bool IsSameProcessRunning(const ProcessIdentity& identity, const std::string& procfs) {
  std::string dir = procfs + "/" + std::to_string(identity.pid);
  auto stat_text = ReadWholeFile(dir + "/stat");
  if (!stat_text) return false;
  auto stat = ParseProcStat(*stat_text);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return false;
  if (stat->start_time != identity.start_time) return false;
  if (identity.cmdline.empty()) return true;
  return ReadWholeFile(dir + "/cmdline").value_or("") == identity.cmdline;
}

Expected<StopOutcome> StopDaemon(const ProcessIdentity& identity, std::chrono::milliseconds grace,
                                 const std::string& procfs) {
  if (identity.pid <= 1) return Error{"refusing to signal pid " + std::to_string(identity.pid)};
  int pidfd = OpenPidFd(identity.pid);
  // Verify after opening the pidfd: from here on the fd pins this process.
  if (!IsSameProcessRunning(identity, procfs)) {
    if (pidfd >= 0) close(pidfd);
    auto stat_text = ReadWholeFile(procfs + "/" + std::to_string(identity.pid) + "/stat");
    auto stat = stat_text ? ParseProcStat(*stat_text) : std::nullopt;
    if (!stat) return StopOutcome::kNotRunning;
    // Ours and on its way out: a zombie, or still in exit() with its memory
    // (and so its cmdline) already released, before the state turns Z.
    const std::string dir = procfs + "/" + std::to_string(identity.pid);
    bool exiting =
        stat->state == 'Z' || stat->state == 'X' ||
        (!identity.cmdline.empty() && ReadWholeFile(dir + "/cmdline").value_or("").empty());
    bool ours_exiting = exiting && stat->start_time == identity.start_time;
    return ours_exiting ? StopOutcome::kNotRunning : StopOutcome::kNotOurs;
  }
  SendSignal(pidfd, identity.pid, SIGTERM);
  StopOutcome outcome = StopOutcome::kTerminated;
  if (!WaitGone(identity, procfs, grace)) {
    SendSignal(pidfd, identity.pid, SIGKILL);
    outcome = StopOutcome::kKilled;
    if (!WaitGone(identity, procfs, std::chrono::seconds(5))) {
      if (pidfd >= 0) close(pidfd);
      return Error{"pid " + std::to_string(identity.pid) +
                   " survived SIGKILL (stuck in the kernel?)"};
    }
  }
  if (pidfd >= 0) close(pidfd);
  return outcome;
}

std::string FormatPidRecord(const ProcessIdentity& identity) {
  return std::to_string(identity.pid) + " " + std::to_string(identity.start_time) + "\n";
}

std::optional<ProcessIdentity> ParsePidRecord(std::string_view text) {
  ProcessIdentity identity;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  auto [after_pid, ec1] = std::from_chars(p, end, identity.pid);
  if (ec1 != std::errc() || after_pid == end || *after_pid != ' ' || identity.pid <= 0) {
    return std::nullopt;
  }
  auto [after_start, ec2] = std::from_chars(after_pid + 1, end, identity.start_time);
  if (ec2 != std::errc()) return std::nullopt;
  if (after_start != end && !(*after_start == '\n' && after_start + 1 == end)) return std::nullopt;
  return identity;
}

}  // namespace jobmon
