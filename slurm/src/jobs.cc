#include "jobmon/slurm/jobs.h"

#include <map>
#include <optional>
#include <set>

#include "json_document.h"
#include "json_fields.h"

namespace jobmon::slurm {
namespace {

using nlohmann::json;

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
    std::optional<uint64_t> rc = code != it->end() ? Number(*code) : std::nullopt;
    std::optional<uint64_t> sig;
    if (signal != it->end() && signal->is_object()) {
      if (auto id = signal->find("id"); id != signal->end()) sig = Number(*id);
    }
    if (!rc && !sig) return "";
    return std::to_string(rc.value_or(0) & 0xff) + ":" + std::to_string(sig.value_or(0) & 0x7f);
  }
  return "";
}

}  // namespace

slurm_pattern::JobFields PatternFields(const SlurmJob& job, const std::string& batch_host) {
  return {.job_id = job.job_id,
          .array_job_id = job.array_task_id ? job.array_job_id : 0,
          .array_task_id = job.array_task_id,
          .user = job.user,
          .name = job.name,
          .batch_host = batch_host,
          .work_dir = job.work_dir};
}

std::string ExpandStdoutPattern(const std::string& pattern, const SlurmJob& job,
                                const std::string& batch_host) {
  return slurm_pattern::StdoutPath(pattern, PatternFields(job, batch_host));
}

namespace {

// The fields of a job ParseJobsJson reads. Slurm prints over a hundred a
// job; building the others into the document and freeing them again was
// most of a 10,000-job answer's parse.
const std::set<std::string, std::less<>>& JobFieldsRead() {
  static const std::set<std::string, std::less<>> kRead = {
      "job_id",          "user_id",
      "group_id",        "name",
      "user_name",       "job_state",
      "nodes",           "node_count",
      "partition",       "current_working_directory",
      "start_time",      "end_time",
      "array_job_id",    "array_task_id",
      "het_job_id",      "het_job_offset",
      "batch_flag",      "standard_output",
      "stdout_expanded", "batch_host",
      "exit_code"};
  return kRead;
}

}  // namespace

namespace {

// One job of the document; nullopt when it has no id, user id or group id.
std::optional<SlurmJob> ReadJob(const json& j) {
  auto id = Unsigned<uint32_t>(j, "job_id");
  auto uid = Unsigned<uid_t>(j, "user_id");
  auto gid = Unsigned<gid_t>(j, "group_id");
  // Without its owner the daemon cannot read the job's files as that user.
  if (!id || *id == 0 || !uid || !gid) return std::nullopt;
  SlurmJob job;
  job.job_id = *id;
  job.uid = *uid;
  job.gid = *gid;
  job.name = Text(j, "name");
  job.user = Text(j, "user_name");
  job.state = State(j, "job_state");
  job.node_list = Text(j, "nodes");
  job.num_nodes = static_cast<int>(Unsigned<uint32_t>(j, "node_count").value_or(0));
  job.partition = Text(j, "partition");
  job.work_dir = Text(j, "current_working_directory");
  job.start_time = Time(j, "start_time");
  job.end_time = Time(j, "end_time");
  // 0 and NO_VAL both mean "not an array task" / "not a component".
  if (auto a = Unsigned<uint32_t>(j, "array_job_id"); a && *a != 0) {
    job.array_job_id = *a;
    job.array_task_id = Unsigned<uint32_t>(j, "array_task_id");
  }
  if (auto h = Unsigned<uint32_t>(j, "het_job_id"); h && *h != 0) {
    job.het_job_id = h;
    job.het_job_offset = Unsigned<uint32_t>(j, "het_job_offset");
  }
  const bool batch = Flag(j, "batch_flag");
  const std::string pattern = Text(j, "standard_output");
  const std::string expanded = Text(j, "stdout_expanded");
  if (!expanded.empty()) {
    job.std_out = expanded;
  } else if (batch || !pattern.empty()) {
    job.std_out = ExpandStdoutPattern(pattern, job, Text(j, "batch_host"));
  }
  job.exit_code = ExitCode(j);
  return job;
}

// A later component runs no batch script of its own: its log is the leader's.
void GiveComponentsTheLeadersLog(std::vector<SlurmJob>& jobs) {
  std::map<uint32_t, std::string> het_leader_out;
  for (const SlurmJob& job : jobs) {
    if (job.het_job_id && job.het_job_offset.value_or(0) == 0 && !job.std_out.empty())
      het_leader_out[*job.het_job_id] = job.std_out;
  }
  for (SlurmJob& job : jobs) {
    if (!job.het_job_id || job.het_job_offset.value_or(0) == 0) continue;
    if (auto leader = het_leader_out.find(*job.het_job_id); leader != het_leader_out.end())
      job.std_out = leader->second;
  }
}

// `last`: the jobs read from the last answer by their fingerprints (null:
// every job read afresh); replaced by this answer's.
Expected<JobsAnswer> ReadJobs(std::string& text, JobsReader::Known* last) {
  std::vector<uint64_t> prints;
  KeptFields kept{"jobs", &JobFieldsRead()};
  if (last) {
    kept.fingerprints = &prints;
    kept.known = [last](uint64_t print) { return last->count(print) > 0; };
  }
  json doc = ParseKept(text, kept);
  if (doc.is_discarded() || !doc.is_object()) return Error{"Slurm's job JSON: not a JSON object"};
  JobsAnswer answer;
  answer.errors = Errors(doc);
  auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) {
    if (!answer.errors.empty()) return answer;  // the errors say why
    return Error{"Slurm's job JSON: no \"jobs\" array"};
  }
  answer.jobs.reserve(jobs->size());
  // The slow parser gives no fingerprints: every job read, none remembered.
  const bool printed = last && prints.size() == jobs->size();
  JobsReader::Known now;
  for (size_t i = 0; i < jobs->size(); ++i) {
    const json& j = (*jobs)[i];
    std::optional<SlurmJob> job;
    if (printed && j.is_null() && prints[i] != 0) {
      if (auto known = last->extract(prints[i]); !known.empty()) {
        job = known.mapped();
        now.insert(std::move(known));
      } else if (auto again = now.find(prints[i]); again != now.end()) {
        job = again->second;  // listed twice alike
      } else {
        continue;
      }
    } else if (j.is_object()) {
      job = ReadJob(j);
      if (printed) now.emplace(prints[i], job);
    }
    if (job) answer.jobs.push_back(std::move(*job));
  }
  GiveComponentsTheLeadersLog(answer.jobs);
  if (last) *last = std::move(now);
  return answer;
}

}  // namespace

Expected<JobsAnswer> ParseJobsJson(std::string text) { return ParseJobsJsonInPlace(text); }

Expected<JobsAnswer> ParseJobsJsonInPlace(std::string& text) { return ReadJobs(text, nullptr); }

Expected<JobsAnswer> JobsReader::Read(std::string& text) { return ReadJobs(text, &last_); }

bool IsTerminalState(std::string_view state) {
  for (std::string_view done : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    if (state.rfind(done, 0) == 0) return true;
  }
  return false;
}

}  // namespace jobmon::slurm
