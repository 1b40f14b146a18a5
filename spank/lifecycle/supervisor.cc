#include "lifecycle/supervisor.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "jobmon/common/atomic_file.h"

namespace jobmon::lifecycle {
namespace {

using Clock = std::chrono::steady_clock;

void Status(const SupervisorOptions& options, const std::string& line) {
  std::cerr << "jobmon-supervise: " << line << std::endl;
  if (!options.status_file.empty()) (void)WriteFileAtomically(options.status_file, line + "\n");
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

pid_t Start(const SupervisorOptions& options, const sigset_t& original_mask) {
  std::vector<char*> argv;
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: dies with us, and has the signal mask we were started with.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  execv(argv[0], argv.data());
  std::cerr << "jobmon-supervise: cannot run " << argv[0] << ": " << std::strerror(errno)
            << std::endl;
  _exit(127);
}

// Waits for a signal until `deadline`; 0 on timeout.
int WaitSignal(const sigset_t& set, Clock::time_point deadline) {
  auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  timespec timeout{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  int sig = sigtimedwait(&set, nullptr, &timeout);
  return sig < 0 ? 0 : sig;
}

bool Reap(pid_t child, int* status) { return waitpid(child, status, WNOHANG) == child; }

void StopChild(const SupervisorOptions& options, pid_t child, const sigset_t& set) {
  int status = 0;
  if (Reap(child, &status)) return;
  kill(child, SIGTERM);
  auto deadline = Clock::now() + options.stop_grace;
  while (Clock::now() < deadline) {
    if (Reap(child, &status)) return;
    WaitSignal(set, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
}

}  // namespace

std::chrono::milliseconds Backoff(const SupervisorOptions& options, int restart) {
  auto delay = options.initial_backoff;
  for (int i = 1; i < restart && delay < options.max_backoff; ++i) delay *= 2;
  return std::min(delay, options.max_backoff);
}

int RunSupervisor(const SupervisorOptions& options) {
  sigset_t set, original;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, &original);
  int restarts = 0;
  for (;;) {
    auto started = Clock::now();
    pid_t child = Start(options, original);
    if (child < 0) {
      Status(options, std::string("gave up: fork: ") + std::strerror(errno));
      return 1;
    }
    Status(options,
           "running pid " + std::to_string(child) + " (restarts " + std::to_string(restarts) + ")");
    int status = 0;
    for (;;) {
      int sig = WaitSignal(set, Clock::now() + std::chrono::hours(24));
      if (sig == SIGTERM || sig == SIGINT) {
        StopChild(options, child, set);
        Status(options, "stopped");
        return 0;
      }
      if (sig == SIGCHLD && Reap(child, &status)) break;
    }
    if (Clock::now() - started >= options.healthy_after) restarts = 0;
    if (restarts >= options.max_restarts) {
      Status(options,
             "gave up after " + std::to_string(restarts) + " restarts: last " + Describe(status));
      return 1;
    }
    ++restarts;
    auto delay = Backoff(options, restarts);
    Status(options, "exited with " + Describe(status) + "; restart " + std::to_string(restarts) +
                        "/" + std::to_string(options.max_restarts) + " in " +
                        std::to_string(delay.count()) + " ms");
    auto deadline = Clock::now() + delay;
    while (int sig = WaitSignal(set, deadline)) {
      if (sig == SIGTERM || sig == SIGINT) {
        Status(options, "stopped");
        return 0;
      }
    }
  }
}

}  // namespace jobmon::lifecycle
