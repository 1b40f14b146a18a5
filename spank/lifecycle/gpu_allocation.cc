#include "lifecycle/gpu_allocation.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>

#include "jobmon/common/text_lines.h"
#include "jobmon/common/whole_number.h"

namespace jobmon::lifecycle {
namespace {

std::optional<long> NumberOrStar(std::string_view text) {
  if (text == "*") return -1;
  return NonNegativeNumber<long>(text);
}

std::string Join(const std::vector<int>& gpus) {
  std::string out;
  for (int gpu : gpus) out += (out.empty() ? "" : ",") + std::to_string(gpu);
  return out;
}

// The first of Slurm's variables that holds a list of indices.
std::optional<std::pair<std::string, std::vector<int>>> FromSlurm(const GetEnv& getenv,
                                                                  std::vector<std::string>& notes) {
  for (const char* name :
       {"SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"}) {
    const char* value = getenv(name);
    if (!value || !*value) continue;
    if (auto gpus = ParseGpuIndexList(value)) return std::pair{std::string(name), *gpus};
    notes.push_back(std::string(name) + "='" + value + "' is not a list of GPU indices");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<int>> ParseGpuIndexList(std::string_view text) {
  std::vector<int> gpus;
  while (!text.empty()) {
    size_t comma = text.find(',');
    auto gpu = NonNegativeNumber<long>(text.substr(0, comma));
    if (!gpu || *gpu > 4095) return std::nullopt;
    gpus.push_back(static_cast<int>(*gpu));
    if (comma == text.npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return std::nullopt;  // trailing comma
  }
  if (gpus.empty()) return std::nullopt;
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  return gpus;
}

std::optional<std::vector<DeviceRule>> ParseDevicesList(std::string_view text) {
  std::vector<DeviceRule> rules;
  for (std::string_view line : TextLines(text)) {
    if (line.empty()) continue;
    // "<type> <major>:<minor> <access>"
    if (line.size() < 7 || line[1] != ' ') return std::nullopt;
    DeviceRule rule;
    rule.type = line[0];
    if (rule.type != 'a' && rule.type != 'b' && rule.type != 'c') return std::nullopt;
    std::string_view rest = line.substr(2);
    size_t space = rest.find(' ');
    if (space == rest.npos) return std::nullopt;
    std::string_view numbers = rest.substr(0, space);
    rule.access = std::string(rest.substr(space + 1));
    size_t colon = numbers.find(':');
    if (colon == numbers.npos) return std::nullopt;
    auto major = NumberOrStar(numbers.substr(0, colon));
    auto minor = NumberOrStar(numbers.substr(colon + 1));
    if (!major || !minor || rule.access.empty()) return std::nullopt;
    rule.major = *major;
    rule.minor = *minor;
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::optional<std::vector<int>> GpusAllowed(const std::vector<DeviceRule>& rules,
                                            const std::vector<GpuDeviceNode>& node_gpus) {
  if (node_gpus.empty()) return std::nullopt;
  std::vector<int> allowed;
  for (const GpuDeviceNode& gpu : node_gpus) {
    for (const DeviceRule& rule : rules) {
      if (rule.type == 'b') continue;
      // "a" covers every device, whatever numbers it shows.
      bool covers = rule.type == 'a' || ((rule.major == -1 || rule.major == gpu.major) &&
                                         (rule.minor == -1 || rule.minor == gpu.minor));
      if (!covers) continue;
      // A wildcard that reaches every GPU of this major restricts nothing.
      if (rule.type == 'a' || rule.major == -1 || rule.minor == -1) return std::nullopt;
      allowed.push_back(gpu.index);
      break;
    }
  }
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  return allowed;
}

GpuAllocation DecideGpuAllocation(const GetEnv& getenv,
                                  const std::optional<std::string>& devices_list,
                                  const std::vector<GpuDeviceNode>& node_gpus) {
  GpuAllocation out;
  auto slurm = FromSlurm(getenv, out.notes);
  std::optional<std::vector<int>> cgroup;
  if (devices_list) {
    if (auto rules = ParseDevicesList(*devices_list)) {
      cgroup = GpusAllowed(*rules, node_gpus);
    } else {
      out.notes.push_back("the job's cgroup devices.list is not in the kernel's format; ignored");
    }
  }
  if (slurm) {
    out.gpus = slurm->second;
    out.source = kGpuSourceSlurm;
    if (cgroup && *cgroup != out.gpus) {
      out.notes.push_back(slurm->first + " says GPUs " + Join(out.gpus) +
                          ", the job's cgroup allows " + Join(*cgroup) + "; serving " +
                          slurm->first + "'s");
    }
    return out;
  }
  if (cgroup && !cgroup->empty()) {
    out.gpus = *cgroup;
    out.source = kGpuSourceCgroup;
    return out;
  }
  out.notes.push_back(
      "no GPU allocation in the prolog environment (no gres) nor in a job cgroup; the exporter "
      "serves every GPU of the node");
  return out;
}

std::vector<std::string> ExporterGpuArgs(const GpuAllocation& allocation) {
  std::vector<std::string> args = {"--gpus-source", allocation.source};
  if (allocation.source != kGpuSourceAll && !allocation.gpus.empty()) {
    args.insert(args.end(), {"--gpus", Join(allocation.gpus)});
  }
  return args;
}

std::string JobDevicesListPath(const std::string& cgroup_root, uid_t uid, uint32_t job_id) {
  return cgroup_root + "/devices/slurm/uid_" + std::to_string(uid) + "/job_" +
         std::to_string(job_id) + "/devices.list";
}

std::vector<GpuDeviceNode> ListGpuDeviceNodes(const std::string& dev) {
  namespace fs = std::filesystem;
  std::vector<GpuDeviceNode> out;
  auto add = [&](const fs::path& path, std::string_view digits, int offset) {
    auto n = NonNegativeNumber<long>(digits);
    struct stat st {};
    if (!n || *n < offset || stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return;
    out.push_back({static_cast<int>(*n - offset), static_cast<long>(major(st.st_rdev)),
                   static_cast<long>(minor(st.st_rdev))});
  };
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dev, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 && name.size() > 6) add(entry.path(), name.substr(6), 0);
  }
  for (const auto& entry : fs::directory_iterator(fs::path(dev) / "dri", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("renderD", 0) == 0 && name.size() > 7) add(entry.path(), name.substr(7), 128);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

}  // namespace jobmon::lifecycle
