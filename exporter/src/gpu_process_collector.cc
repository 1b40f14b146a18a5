// gpu_processes: processes holding /dev/kfd or /dev/nvidia* open.
#include "jobmon/exporter/gpu_process_collector.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace jobmon::exporter {

namespace {

bool AllDigits(const char* s) {
  if (*s == '\0') return false;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
  }
  return true;
}

bool HoldsGpuDevice(const std::string& fd_dir, std::string_view dev) {
  DIR* dir = opendir(fd_dir.c_str());
  if (!dir) return false;  // gone, or not ours to read
  bool found = false;
  char target[4096];
  while (dirent* entry = readdir(dir)) {
    if (!AllDigits(entry->d_name)) continue;
    std::string link = fd_dir + "/" + entry->d_name;
    ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    if (IsGpuDeviceNode(std::string_view(target, static_cast<size_t>(n)), dev)) {
      found = true;
      break;
    }
  }
  closedir(dir);
  return found;
}

}  // namespace

bool IsGpuDeviceNode(std::string_view link_target, std::string_view dev) {
  while (dev.size() > 1 && dev.back() == '/') dev.remove_suffix(1);
  if (link_target.size() <= dev.size() + 1 || link_target.substr(0, dev.size()) != dev ||
      link_target[dev.size()] != '/') {
    return false;
  }
  std::string_view name = link_target.substr(dev.size() + 1);
  if (name == "kfd" || name == "nvidiactl" || name == "nvidia-uvm") return true;
  if (name.size() > 6 && name.substr(0, 6) == "nvidia") {
    return std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  return false;
}

Expected<Families> GpuProcessCollector::Collect() {
  DIR* proc = opendir(procfs_.c_str());
  if (!proc) return Error{procfs_ + ": " + std::strerror(errno)};
  double processes = 0;
  while (dirent* entry = readdir(proc)) {
    if (!AllDigits(entry->d_name)) continue;
    if (HoldsGpuDevice(procfs_ + "/" + entry->d_name + "/fd", dev_)) processes += 1;
  }
  closedir(proc);
  FamilyBuilder families;
  families.Gauge("hw_gpu_user_processes", "Processes holding /dev/kfd or /dev/nvidia* open", {},
                 processes);
  return families.Take();
}

}  // namespace jobmon::exporter
