#include "jobmon/monitor/slurm_jobs.h"

#include <cctype>
#include <charconv>

namespace jobmon::monitor {
namespace {

// "Key=" where Key is Slurm's field name syntax (letters, digits, _, :, /).
std::optional<size_t> FieldKeyLength(std::string_view token) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  if (!std::isupper(static_cast<unsigned char>(token[0]))) return std::nullopt;
  for (size_t i = 0; i < eq; ++i) {
    char c = token[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':' && c != '/') {
      return std::nullopt;
    }
  }
  return eq;
}

template <typename T>
T Number(const std::string& text) {
  T value{};
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

SlurmJob ParseLine(std::string_view line) {
  SlurmJob job;
  std::string key;
  size_t start = 0;
  while (start < line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    std::string_view token = line.substr(start, end - start);
    start = end + 1;
    if (token.empty()) continue;
    if (auto eq = FieldKeyLength(token)) {
      key = std::string(token.substr(0, *eq));
      job.fields[key] = std::string(token.substr(*eq + 1));
    } else if (!key.empty()) {
      job.fields[key] += " " + std::string(token);
    }
  }
  auto get = [&](const char* name) {
    auto it = job.fields.find(name);
    return it == job.fields.end() ? std::string() : it->second;
  };
  job.job_id = Number<uint32_t>(get("JobId"));
  job.name = get("JobName");
  std::string user = get("UserId");
  job.user = user.substr(0, user.find('('));
  job.state = get("JobState");
  job.node_list = get("NodeList");
  job.num_nodes = Number<int>(get("NumNodes"));
  job.partition = get("Partition");
  job.std_out = get("StdOut");
  job.work_dir = get("WorkDir");
  job.start_time = get("StartTime");
  job.end_time = get("EndTime");
  job.exit_code = get("ExitCode");
  return job;
}

}  // namespace

std::vector<SlurmJob> ParseScontrolJobs(std::string_view text) {
  std::vector<SlurmJob> jobs;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("JobId=", 0) != 0) continue;  // "No jobs in the system" and noise
    SlurmJob job = ParseLine(line);
    if (job.job_id != 0) jobs.push_back(std::move(job));
  }
  return jobs;
}

bool IsTerminalState(std::string_view state) {
  for (std::string_view done : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    if (state.rfind(done, 0) == 0) return true;
  }
  return false;
}

}  // namespace jobmon::monitor
