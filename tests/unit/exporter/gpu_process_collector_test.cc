// The gpu_processes collector: which device nodes are GPUs, and the live
// processes that hold one open.
#include "jobmon/exporter/gpu_process_collector.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collector_test_support.h"

namespace jobmon::exporter {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;
using test_support::Text;

TEST(GpuProcesses, RecognisesGpuDeviceNodesOnly) {
  for (const char* yes :
       {"/dev/kfd", "/dev/nvidia0", "/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm"}) {
    EXPECT_TRUE(IsGpuDeviceNode(yes, "/dev")) << yes;
  }
  for (const char* no :
       {"/dev/dri/renderD128", "/dev/nvidia-modeset", "/dev/nvidiafoo", "/dev/kfd2", "/dev/null",
        "/tmp/dev/kfd", "socket:[1234]", "/dev", "/devkfd"}) {
    EXPECT_FALSE(IsGpuDeviceNode(no, "/dev")) << no;
  }
  EXPECT_TRUE(IsGpuDeviceNode("/tmp/x/kfd", "/tmp/x/"));
}

TEST(GpuProcesses, CountsLiveProcessesHoldingTheDevice) {
  TempDir dev("gpudev");
  std::ofstream(dev.path / "kfd") << "";
  std::ofstream(dev.path / "nvidia0") << "";
  GpuProcessCollector collector("/proc", dev.path.string());
  auto count = [&] {
    std::string text = Text(collector.Collect().value());
    auto pos = text.find("\nhw_gpu_user_processes ");
    return pos == std::string::npos ? -1 : std::stoi(text.substr(pos + 23));
  };
  EXPECT_EQ(count(), 0);
  // Two children hold the "devices" open (one each); a third holds nothing.
  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  std::vector<pid_t> children;
  for (const char* node : {"kfd", "nvidia0", ""}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(release[1]);  // else the read below never sees end-of-file
      if (*node) open((dev.path / node).c_str(), O_RDONLY);
      char c = 1;
      (void)!write(ready[1], &c, 1);
      (void)!read(release[0], &c, 1);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (size_t i = 0; i < children.size(); ++i) {
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
  }
  EXPECT_EQ(count(), 2);
  close(release[1]);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
  EXPECT_EQ(count(), 0);
  close(ready[0]);
  close(ready[1]);
  close(release[0]);
}

}  // namespace
}  // namespace jobmon::exporter
