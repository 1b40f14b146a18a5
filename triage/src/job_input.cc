#include "jobmon/triage/job_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "jobmon/common/whole_number.h"
#include "jobmon/slurm/client.h"

namespace jobmon::triage {
namespace fs = std::filesystem;

namespace {

// "7877-FOO.log" / "7877-FOO" -> "7877".
std::optional<std::string> JobIdFromName(const std::string& name) {
  size_t digits = 0;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  if (digits == 0 || (digits < name.size() && name[digits] != '-' && name[digits] != '.')) {
    return std::nullopt;
  }
  return name.substr(0, digits);
}

Expected<JobInput> FromJobDir(const fs::path& dir) {
  std::error_code ec;
  fs::path link = dir / "log";
  if (!fs::is_symlink(link, ec)) {
    return Error{dir.string() + " has no `log` symlink: a shared checkpoint dir, not a job dir"};
  }
  fs::path target = fs::read_symlink(link, ec);
  if (target.is_relative()) target = dir / target;
  if (!fs::is_regular_file(target, ec)) {
    return Error{"the `log` symlink of " + dir.string() + " points to " + target.string() +
                 ", which is not a file"};
  }
  return JobInput{fs::weakly_canonical(target, ec).string(), dir.string(),
                  JobIdFromName(dir.filename().string())};
}

}  // namespace

Expected<uint32_t> ParseJobId(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  if (text.empty() || text.find_first_not_of("0123456789") != text.npos)
    return Error{"job id " + quoted + ": not a number"};
  // Digits only, so a number WholeNumber refuses is out of range.
  const std::optional<uint32_t> id = WholeNumber<uint32_t>(text);
  if (!id || *id == 0)
    return Error{"job id " + quoted + " is out of range (Slurm job ids are 1..4294967295)"};
  return *id;
}

Expected<JobInput> ResolveJobInput(const std::string& argument, const std::string& outputs_dir) {
  std::error_code ec;
  fs::path path(argument);
  if (fs::is_directory(path, ec)) return FromJobDir(path);
  if (fs::exists(path, ec)) {
    if (!fs::is_regular_file(path, ec)) return Error{argument + " is not a regular file"};
    JobInput input{argument, "", JobIdFromName(path.filename().string())};
    if (path.extension() == ".log") {
      fs::path dir = path;
      dir.replace_extension();
      if (fs::is_directory(dir, ec)) input.job_dir = dir.string();
    }
    return input;
  }
  bool numeric = !argument.empty() && std::all_of(argument.begin(), argument.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!numeric) return Error{"no such file or directory: " + argument};
  if (!fs::is_directory(outputs_dir, ec)) {
    return Error{"job id " + argument + ": outputs dir " + outputs_dir +
                 " does not exist (use --outputs DIR)"};
  }
  std::vector<fs::path> dirs, logs;
  for (const auto& entry : fs::directory_iterator(outputs_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(argument + "-", 0) != 0) continue;
    if (entry.is_directory(ec) && fs::is_symlink(entry.path() / "log", ec))
      dirs.push_back(entry.path());
    else if (entry.is_regular_file(ec) && entry.path().extension() == ".log")
      logs.push_back(entry.path());
  }
  if (dirs.size() == 1) return FromJobDir(dirs[0]);
  if (dirs.empty() && logs.size() == 1) return ResolveJobInput(logs[0].string(), outputs_dir);
  if (dirs.empty() && logs.empty()) {
    return Error{"no job " + argument + " in " + outputs_dir + " (looked for " + argument +
                 "-*/ and " + argument + "-*.log)"};
  }
  std::string names;
  for (const auto& p : dirs.empty() ? logs : dirs) names += " " + p.filename().string();
  return Error{"job id " + argument + " is ambiguous in " + outputs_dir + ":" + names};
}

Expected<std::vector<JobInput>> ListOutputJobs(const std::string& outputs_dir) {
  std::error_code ec;
  if (!fs::is_directory(outputs_dir, ec)) return Error{outputs_dir + " is not a directory"};
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(outputs_dir, ec)) {
    if (entry.is_directory(ec) && fs::is_symlink(entry.path() / "log", ec))
      dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  std::vector<JobInput> jobs;
  for (const auto& dir : dirs) {
    auto job = FromJobDir(dir);
    if (job) jobs.push_back(*job);
  }
  return jobs;
}

std::optional<SlurmView> JobStateFromSqueueJson(const std::string& text,
                                                const std::string& job_id) {
  auto answer = slurm::ParseJobsJson(text);
  if (!answer || !answer->errors.empty()) return std::nullopt;
  for (const auto& job : answer->jobs) {
    if (std::to_string(job.job_id) == job_id && !job.state.empty())
      return SlurmView{job.state, ParseSlurmExitCode(job.exit_code)};
  }
  return std::nullopt;
}

std::optional<SlurmView> QuerySlurmJobState(const std::string& job_id) {
  auto job = QuerySlurmJob(job_id, std::chrono::seconds(2));
  if (!job || job->state.empty()) return std::nullopt;
  return SlurmView{job->state, ParseSlurmExitCode(job->exit_code)};
}

std::optional<slurm::SlurmJob> QuerySlurmJob(const std::string& job_id,
                                             std::chrono::milliseconds timeout) {
  slurm::Client client({.timeout_seconds = std::chrono::duration<double>(timeout).count()});
  auto jobs = client.Jobs();
  if (!jobs) return std::nullopt;
  for (auto& job : *jobs) {
    if (std::to_string(job.job_id) == job_id) return std::move(job);
  }
  return std::nullopt;
}

}  // namespace jobmon::triage
