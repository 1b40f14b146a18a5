#include "jobmon/common/run_command.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

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

}  // namespace
}  // namespace jobmon
