#include "jobmon/common/run_command.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "jobmon/common/child_environment.h"

namespace jobmon {
namespace {

using namespace std::chrono_literals;

// The descriptors the helper holds, one number a line, as its shell sees
// them (the shell's own listing: `ls` would add the fd it reads with).
std::string HelperDescriptors(const CommandOptions& options) {
  auto result = RunCommand({"/bin/sh", "-c", "ls /proc/$$/fd"}, options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  return result.ok() ? result->output : "";
}

// A daemon holds sockets libcurl opened without close-on-exec: the helper
// it starts (as the job's user, for `jobmon diagnose --for-monitor`) must
// get stdin, stdout and stderr alone.
TEST(RunCommand, TheHelperGetsNoDescriptorOfTheCallerBeyondStdio) {
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);  // inheritable
  int high = dup2(sockets[0], 200);
  ASSERT_EQ(high, 200);
  CommandOptions options;
  options.timeout = 10s;
  EXPECT_EQ(HelperDescriptors(options), "0\n1\n2\n");
  if (geteuid() == 0) {
    options.run_as = JobUser{65534, 65534};
    EXPECT_EQ(HelperDescriptors(options), "0\n1\n2\n") << "run as another user";
  }
  close(high);
  close(sockets[0]);
  close(sockets[1]);
}

// The "Uid:" line of a thread's /proc status (real, effective, saved, fs).
std::string ThreadUids(pid_t tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Uid:", 0) == 0) return line;
  }
  return "";
}

// The helper starts through vfork (run_command.cc): it changes its own
// credentials with raw system calls, never the caller's threads' (glibc's
// setuid would broadcast the change to every thread of the shared memory).
TEST(RunCommand, AHelperRunAsAnotherUserLeavesTheCallersThreadsTheirUid) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a helper as another user";
  std::atomic<pid_t> tid{0};
  std::atomic<bool> stop{false};
  std::thread other([&] {
    tid = gettid();
    while (!stop) std::this_thread::sleep_for(1ms);
  });
  while (tid == 0) std::this_thread::sleep_for(1ms);
  const std::string before = ThreadUids(tid);
  CommandOptions options;
  options.timeout = 10s;
  options.run_as = JobUser{65534, 65534};
  auto result = RunCommand({"id", "-u"}, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->output, "65534\n") << "the helper runs as the user asked for";
  EXPECT_EQ(ThreadUids(tid), before) << "the caller's other thread";
  EXPECT_EQ(ThreadUids(gettid()), before) << "the calling thread";
  stop = true;
  other.join();
}

std::atomic<int> usr1_seen{0};

// The child gets the caller's signal mask back (everything is blocked only
// around vfork), and the caller's mask and handlers are as they were.
TEST(RunCommand, TheHelperHasTheCallersSignalMaskAndTheCallerKeepsItsOwn) {
  sigset_t usr2, before, after;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr2, &before), 0);
  auto* previous = std::signal(SIGUSR1, [](int) { ++usr1_seen; });
  CommandOptions options;
  options.timeout = 10s;
  auto result = RunCommand({"grep", "SigBlk", "/proc/self/status"}, options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  // SIGUSR2 is signal 12: bit 11 of the mask, 0x800.
  EXPECT_EQ(result->output, "SigBlk:\t0000000000000800\n");
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &before, &after), 0);
  EXPECT_TRUE(sigismember(&after, SIGUSR2)) << "the caller's mask is as it was";
  EXPECT_FALSE(sigismember(&after, SIGUSR1));
  raise(SIGUSR1);
  EXPECT_EQ(usr1_seen.load(), 1) << "the caller's handler is still its own";
  std::signal(SIGUSR1, previous);
}

// What a helper's environment holds, as `env` prints it.
std::string HelperEnvironment(const CommandOptions& options) {
  auto result = RunCommand({"env"}, options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  return result.ok() ? result->output : "";
}

// An admin runs the daemon or `jobmon diagnose` with secrets in the
// environment (JOBMON_STORE_TOKEN): a helper run as the job's user gets the
// listed variables alone.
TEST(RunCommand, AHelperRunAsAnotherUserGetsNoneOfOurSecrets) {
  setenv("JOBMON_STORE_TOKEN", "s3cret-token", 1);
  setenv("TZ", "UTC", 1);
  CommandOptions options;
  options.timeout = 10s;
  options.run_as = JobUser{65534, 65534};
  const std::string env = HelperEnvironment(options);
  unsetenv("JOBMON_STORE_TOKEN");
  EXPECT_EQ(env.find("s3cret-token"), std::string::npos) << env;
  EXPECT_NE(env.find("PATH="), std::string::npos) << env;
  EXPECT_NE(env.find("TZ=UTC"), std::string::npos) << env;
}

// `jobmon diagnose` as root becomes the job's user, then runs gnuplot and
// squeue with no run_as of their own: they must not get root's secrets.
TEST(BecomeUser, WhatTheProcessStartsAfterwardsGetsNoneOfOurSecrets) {
  if (geteuid() != 0) GTEST_SKIP() << "BecomeUser is a no-op unless run as root";
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a process of its own: it stays nobody
    close(report[0]);
    setenv("JOBMON_STORE_TOKEN", "s3cret-token", 1);
    std::string env = BecomeUser(JobUser{65534, 65534}).ok() ? HelperEnvironment({}) : "no";
    ssize_t ignored = write(report[1], env.data(), env.size());
    (void)ignored;
    _exit(0);
  }
  close(report[1]);
  std::string env;
  char buffer[4096];
  for (ssize_t n; (n = read(report[0], buffer, sizeof buffer)) > 0;) env.append(buffer, n);
  close(report[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_NE(env.find("PATH="), std::string::npos) << env;
  EXPECT_EQ(env.find("s3cret-token"), std::string::npos) << env;
}

// A large answer whole, byte for byte; one past max_output cut there, the
// helper still ending (the rest is read and dropped, never left to fill the
// pipe); a short answer as it is; a caller's room reused.
TEST(RunCommand, OutputWholeOrCutAtTheCapWithoutBlockingTheHelper) {
  CommandOptions options;
  options.timeout = 20s;
  options.max_output = 64 << 20;
  // 3,000,000 lines "<n>\n": 22,888,896 bytes.
  auto whole = RunCommand({"/usr/bin/seq", "1", "3000000"}, options);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_FALSE(whole->timed_out);
  ASSERT_EQ(whole->output.size(), 22888896u);
  EXPECT_EQ(whole->output.substr(0, 4), "1\n2\n");
  EXPECT_EQ(whole->output.substr(whole->output.size() - 8), "3000000\n");
  options.max_output = 100000;
  auto cut = RunCommand({"/usr/bin/seq", "1", "3000000"}, options);
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_FALSE(cut->timed_out) << "the helper ran to its end";
  EXPECT_EQ(cut->exit_code, 0);
  EXPECT_EQ(cut->output, whole->output.substr(0, 100000));
  auto short_answer = RunCommand({"/bin/echo", "hello"}, options);
  ASSERT_TRUE(short_answer.ok());
  EXPECT_EQ(short_answer->output, "hello\n");
  // Read into the room given: the last answer's memory, none of its text.
  std::string room = std::move(whole->output);
  const char* memory = room.data();
  options.output_room = &room;
  options.max_output = 64 << 20;
  auto again = RunCommand({"/usr/bin/seq", "1", "3000000"}, options);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->output.data(), memory);
  ASSERT_EQ(again->output.size(), 22888896u);
  EXPECT_EQ(again->output.substr(0, 4), "1\n2\n");
  room = std::move(again->output);
  auto in_room = RunCommand({"/bin/echo", "hello"}, options);
  ASSERT_TRUE(in_room.ok());
  EXPECT_EQ(in_room->output, "hello\n") << "nothing of the last answer is left";
}

TEST(MinimalEnvironment, TheListedVariablesAloneAndADefaultPath) {
  const char* environment[] = {
      "JOBMON_STORE_TOKEN=x", "LANG=C.UTF-8", "PATHX=no", "SLURM_CONF=/etc/slurm/slurm.conf",
      "HOME=/root",           nullptr};
  EXPECT_EQ(
      MinimalEnvironment(environment),
      (std::vector<std::string>{kDefaultPath, "LANG=C.UTF-8", "SLURM_CONF=/etc/slurm/slurm.conf"}));
}

}  // namespace
}  // namespace jobmon
