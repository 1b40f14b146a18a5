#include "jobmon/common/run_command.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "jobmon/common/child_environment.h"
#include "jobmon/common/close_fds.h"

namespace jobmon {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kPipeBytes = 1 << 20;

// In the vfork child, which shares the caller's memory until exec: system
// calls only (no allocation, no lock), as posix_spawn's own child does.
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, int out_fd,
                            const std::optional<JobUser>& run_as, pid_t parent,
                            const sigset_t& caller_mask) {
  // The caller's handlers would run on its memory: the defaults, then the
  // caller's mask back (vfork blocked everything).
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN &&
        current.sa_handler != SIG_DFL) {
      signal(sig, SIG_DFL);
    }
  }
  sigprocmask(SIG_SETMASK, &caller_mask, nullptr);
  setpgid(0, 0);
  dup2(out_fd, STDOUT_FILENO);
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDERR_FILENO);
  }
  // The helper gets stdin, stdout and stderr alone: what the caller holds
  // without close-on-exec (libcurl's sockets, the API socket) stays here,
  // above all when the helper runs as the job's user.
  const int keep_none[2] = {-1, -1};
  CloseFdsFrom(3, keep_none);
  if (run_as && geteuid() == 0) {
    // Raw system calls: glibc's wrappers would change the credentials of the
    // caller's other threads too (its setxid broadcast runs on shared memory).
    const gid_t gid = run_as->gid;
    if (syscall(SYS_setgroups, 1, &gid) != 0 || syscall(SYS_setgid, gid) != 0 ||
        syscall(SYS_setuid, run_as->uid) != 0) {
      _exit(126);
    }
  }
  // After the uid change, which clears it; then make sure the parent did
  // not die before it was set.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(125);
  if (envp) {
    execvpe(argv[0], argv, envp);
  } else {
    execvp(argv[0], argv);
  }
  _exit(127);
}

bool Cancelled(const CommandOptions& options) { return options.cancel && options.cancel->load(); }

// Reaps `pid` if it has exited; true once it has.
bool Reaped(pid_t pid, int& status) {
  pid_t r = waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

// Stops the child's process group: SIGTERM and the grace, then SIGKILL.
int Stop(pid_t pid, std::chrono::milliseconds grace) {
  int status = 0;
  if (grace.count() > 0) {
    kill(-pid, SIGTERM);  // our own child's group, by its pid
    const auto until = Clock::now() + grace;
    while (Clock::now() < until) {
      if (Reaped(pid, status)) {
        kill(-pid, SIGKILL);  // what it left in its group
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Expected<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, size_t max_output) {
  CommandOptions options;
  options.timeout = timeout;
  options.max_output = max_output;
  return RunCommand(argv, options);
}

Expected<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   const CommandOptions& options) {
  if (argv.empty()) return Error{"empty command"};
  // Everything that allocates happens before fork.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // A helper run as someone else gets the minimal environment unless told
  // which: never ours, which may hold secrets.
  std::optional<std::vector<std::string>> env_lines = options.env;
  if (!env_lines && options.run_as) env_lines = MinimalEnvironment();
  std::vector<char*> env;
  if (env_lines) {
    for (const std::string& entry : *env_lines) env.push_back(const_cast<char*>(entry.c_str()));
    env.push_back(nullptr);
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  const pid_t parent = getpid();
  // vfork, not fork: a fork copies the page tables of the whole daemon (a
  // gigabyte at 10,000 jobs) and then faults on every page it writes; that
  // was a sixth of the monitor's CPU (tests/bench/monitor_bench.py, perf).
  // Every signal is blocked until the child has reset its handlers.
  sigset_t all, caller_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &caller_mask);
  pid_t pid = vfork();
  if (pid == 0) {
    ExecChild(args.data(), env_lines ? env.data() : nullptr, out[1], options.run_as, parent,
              caller_mask);
  }
  const int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return Error{std::string("vfork: ") + std::strerror(vfork_errno)};
  }
  close(out[1]);
  CommandResult result;
  const auto deadline = Clock::now() + options.timeout;
  // Whether to stop it: the deadline passed or the caller cancelled.
  auto must_stop = [&] {
    if (Cancelled(options)) return result.cancelled = true;
    if (Clock::now() >= deadline) return result.timed_out = true;
    return false;
  };
  // A large answer (squeue --json of 10,000 jobs is 28 MiB) in few reads:
  // a larger pipe (up to the unprivileged maximum; the default stays if
  // refused) and reads straight into the output. 4 KiB reads, each after a
  // poll, were a sixth of the monitor's CPU in store mode.
  fcntl(out[0], F_SETPIPE_SZ, kPipeBytes);
  if (options.output_room) {
    result.output = std::move(*options.output_room);
    result.output.clear();
  }
  if (options.expected_output > 0)
    result.output.reserve(std::min(options.expected_output, options.max_output));
  char discard[4096];
  bool stop = false;
  while (!(stop = must_stop())) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    long wait_ms = std::max<long>(1, left.count());
    // Short slices when a cancel flag may be set by another thread.
    if (options.cancel) wait_ms = std::min<long>(wait_ms, 200);
    pollfd p{out[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(wait_ms));
    if (ready <= 0) continue;
    std::string& output = result.output;
    const size_t had = output.size();
    // Room for as much again as came so far (64 KiB first, 1 MiB at most):
    // a short answer costs no large buffer.
    const size_t want = std::clamp<size_t>(had, 64 << 10, kPipeBytes);
    const size_t room = options.max_output > had ? std::min(want, options.max_output - had) : 0;
    // Past max_output the rest is read and dropped: the child never blocks on a full pipe.
    if (room > 0) output.resize(had + room);
    ssize_t n =
        room > 0 ? read(out[0], output.data() + had, room) : read(out[0], discard, sizeof discard);
    if (room > 0) output.resize(had + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
  }
  close(out[0]);
  int status = 0;
  bool reaped = false;
  // Its stdout closed: it is exiting, or lingers; the same deadline holds.
  while (!stop && !(reaped = Reaped(pid, status))) {
    stop = must_stop();
    if (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (stop) status = Stop(pid, options.grace);
  result.exit_code = WIFEXITED(status) && !stop ? WEXITSTATUS(status) : -1;
  return result;
}

Expected<void> BecomeUser(const JobUser& user) {
  if (geteuid() != 0) return {};
  const gid_t gid = user.gid;
  if (setgroups(1, &gid) != 0) return Error{std::string("setgroups: ") + std::strerror(errno)};
  if (setgid(user.gid) != 0) return Error{std::string("setgid: ") + std::strerror(errno)};
  if (setuid(user.uid) != 0) return Error{std::string("setuid: ") + std::strerror(errno)};
  // Both real and effective: nothing left to regain.
  if (geteuid() != user.uid || getuid() != user.uid)
    return Error{"uid " + std::to_string(user.uid) + " not taken"};
  // Nor anything of root's environment for what this process starts now.
  KeepMinimalEnvironment();
  return {};
}

}  // namespace jobmon
