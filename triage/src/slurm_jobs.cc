#include "jobmon/triage/slurm_jobs.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace jobmon::triage {
namespace {

using nlohmann::json;

std::string Text(const json& job, const char* key) {
  auto it = job.find(key);
  return it != job.end() && it->is_string() ? it->get<std::string>() : std::string();
}

template <typename T>
std::optional<T> Unsigned(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || !it->is_number_unsigned()) return std::nullopt;
  uint64_t v = it->get<uint64_t>();
  if (v > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(v);
}

// A boolean field; false when absent or of another type (json::value would
// throw on a field of the wrong type).
bool Flag(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::optional<double> Time(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || !it->is_number() || it->get<double>() <= 0) return std::nullopt;
  return it->get<double>();
}

// "RUNNING"; Slurm 23.11+ gives a list, base state first (["RUNNING", "COMPLETING"]).
std::string State(const json& job) {
  auto it = job.find("job_state");
  if (it != job.end() && it->is_array() && !it->empty() && it->front().is_string())
    return it->front().get<std::string>();
  return Text(job, "job_state");
}

// A number, or Slurm 24.05+'s {"set": true, "infinite": false, "number": N}.
std::optional<uint64_t> NumberOrNoVal(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_object() && Flag(value, "set") && !Flag(value, "infinite")) {
    auto n = value.find("number");
    if (n != value.end() && n->is_number_unsigned()) return n->get<uint64_t>();
  }
  return std::nullopt;
}

// Slurm's ExitCode "status:signal", "" when the document has none.
std::string ExitCode(const json& job) {
  auto it = job.find("exit_code");
  if (it == job.end()) return "";
  if (it->is_number_unsigned()) {
    // Slurm 22.05/23.02 (openapi v0.0.38 jobs.c `data_set_int(..., job->exit_code)`): the wait
    // status. scontrol prints it as src/api/job_info.c does: WTERMSIG when
    // signalled, else WEXITSTATUS.
    const uint64_t status = it->get<uint64_t>();
    const uint64_t signal = status & 0x7f;
    return signal != 0 ? "0:" + std::to_string(signal)
                       : std::to_string((status >> 8) & 0xff) + ":0";
  }
  if (it->is_object()) {
    // Slurm 24.05+ (data_parser PROCESS_EXIT_CODE_VERBOSE): return_code and signal/id.
    auto code = it->find("return_code");
    auto signal = it->find("signal");
    std::optional<uint64_t> rc = code != it->end() ? NumberOrNoVal(*code) : std::nullopt;
    std::optional<uint64_t> sig;
    if (signal != it->end() && signal->is_object()) {
      if (auto id = signal->find("id"); id != signal->end()) sig = NumberOrNoVal(*id);
    }
    if (!rc && !sig) return "";
    return std::to_string(rc.value_or(0) & 0xff) + ":" + std::to_string(sig.value_or(0) & 0x7f);
  }
  return "";
}

std::string Padded(uint64_t value, unsigned width) {
  std::string digits = std::to_string(value);
  return digits.size() < width ? std::string(width - digits.size(), '0') + digits : digits;
}

}  // namespace

std::string ExpandStdoutPattern(const std::string& pattern, const SlurmJob& job,
                                uint32_t array_job_id, std::optional<uint32_t> array_task_id) {
  std::string path = pattern;
  if (path.empty()) {
    path = array_task_id ? "slurm-%A_%a.out" : "slurm-%j.out";
  }
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    if (i + 1 < path.size() && path[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t at = i + 1;
    unsigned width = 0;
    while (at < path.size() && std::isdigit(static_cast<unsigned char>(path[at]))) {
      width = std::min(width * 10 + static_cast<unsigned>(path[at] - '0'), 10u);
      ++at;
    }
    if (at >= path.size()) {
      out += path.substr(i);
      break;
    }
    switch (path[at]) {
      case 'A':
        out += Padded(array_task_id ? array_job_id : job.job_id, width);
        break;
      case 'a':
        out += Padded(array_task_id.value_or(0), width);
        break;
      case 'j':
        out += Padded(job.job_id, width);
        break;
      case 'u':
        out += job.user;
        break;
      case 'x':
        out += job.name;
        break;
      default:  // Slurm leaves other specifiers as written
        out += path.substr(i, at - i + 1);
    }
    i = at;
  }
  if (!out.starts_with('/')) out = job.work_dir + "/" + out;
  return out;
}

Expected<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Error{"squeue --json: not a JSON object"};
  auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) return Error{"squeue --json: no \"jobs\" array"};
  std::vector<SlurmJob> out;
  out.reserve(jobs->size());
  for (const json& j : *jobs) {
    if (!j.is_object()) continue;
    auto id = Unsigned<uint32_t>(j, "job_id");
    auto uid = Unsigned<uid_t>(j, "user_id");
    auto gid = Unsigned<gid_t>(j, "group_id");
    // Without its owner the daemon cannot read the job's files as that user.
    if (!id || *id == 0 || !uid || !gid) continue;
    SlurmJob job;
    job.job_id = *id;
    job.uid = *uid;
    job.gid = *gid;
    job.name = Text(j, "name");
    job.user = Text(j, "user_name");
    job.state = State(j);
    job.node_list = Text(j, "nodes");
    job.num_nodes = static_cast<int>(Unsigned<uint32_t>(j, "node_count").value_or(0));
    job.partition = Text(j, "partition");
    job.work_dir = Text(j, "current_working_directory");
    job.start_time = Time(j, "start_time");
    job.end_time = Time(j, "end_time");
    const bool batch = Flag(j, "batch_flag");
    const std::string pattern = Text(j, "standard_output");
    if (batch || !pattern.empty()) {
      job.std_out =
          ExpandStdoutPattern(pattern, job, Unsigned<uint32_t>(j, "array_job_id").value_or(0),
                              Unsigned<uint32_t>(j, "array_task_id"));
    }
    job.exit_code = ExitCode(j);
    out.push_back(std::move(job));
  }
  return out;
}

bool IsTerminalState(std::string_view state) {
  for (std::string_view done : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    if (state.rfind(done, 0) == 0) return true;
  }
  return false;
}

}  // namespace jobmon::triage
