#include "jobmon/slurm/client.h"

#include <chrono>
#include <regex>

#include "jobmon/common/run_command.h"

namespace jobmon::slurm {
namespace {

constexpr size_t kMaxOutput = size_t{1} << 30;  // ~5 KiB per job: 200k jobs

std::string Joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "; ") + e;
  return out;
}

}  // namespace

std::optional<uint32_t> ParseSlurmVersion(std::string_view version_output) {
  static const std::regex kVersion(R"((^|\s)(\d{2})\.(\d{2})(\.(\d+))?)");
  std::cmatch m;
  if (!std::regex_search(version_output.begin(), version_output.end(), m, kVersion))
    return std::nullopt;
  const uint32_t micro = m[5].matched ? static_cast<uint32_t>(std::stoul(m[5])) & 0xff : 0;
  return static_cast<uint32_t>((std::stoul(m[2]) << 16) | (std::stoul(m[3]) << 8) | micro);
}

int ParseSlurmSeries(const std::string& version_output) {
  auto version = ParseSlurmVersion(version_output);
  if (!version) return 0;
  return static_cast<int>(((*version >> 16) & 0xff) * 100 + ((*version >> 8) & 0xff));
}

Expected<std::string> Client::Run(const std::vector<std::string>& argv, size_t expected_bytes,
                                  std::string* room) const {
  const std::string name = argv.front();
  CommandOptions options;
  options.timeout =
      std::chrono::milliseconds(static_cast<int64_t>(commands_.timeout_seconds * 1000));
  options.max_output = kMaxOutput;
  options.expected_output = expected_bytes;
  options.output_room = room;
  auto result = RunCommand(argv, options);
  if (!result) return result.error();
  if (result->timed_out) {
    return Error{name + " did not answer within " + std::to_string(commands_.timeout_seconds) +
                 "s"};
  }
  if (result->exit_code != 0) {
    // "slurm_load_jobs error: Unable to contact slurm controller" goes to stderr.
    return Error{name + " exited with " + std::to_string(result->exit_code) +
                 " (controller unreachable?)"};
  }
  if (result->output.size() >= kMaxOutput) {
    return Error{name + " output exceeds " + std::to_string(kMaxOutput >> 20) + " MiB"};
  }
  return std::move(result->output);
}

Expected<void> Client::SignalJobSteps(uint32_t job_id, const std::string& signal) const {
  auto out = Run({commands_.scancel, "--signal=" + signal, std::to_string(job_id)});
  if (!out) return out.error();
  return {};
}

Expected<void> Client::RequeueExcluding(uint32_t job_id, const std::string& node) const {
  const std::string id = std::to_string(job_id);
  if (auto held = Run({commands_.scontrol, "requeuehold", id}); !held) return held.error();
  if (!node.empty()) {
    if (auto excluded = Run({commands_.scontrol, "update", "JobId=" + id, "ExcNodeList=" + node});
        !excluded) {
      // Released anyway: held, the job would wait for a person.
      (void)Run({commands_.scontrol, "release", id});
      return Error{"excluding " + node + ": " + excluded.error().message};
    }
  }
  if (auto released = Run({commands_.scontrol, "release", id}); !released) return released.error();
  return {};
}

Expected<void> Client::CancelJob(uint32_t job_id, const std::string& reason) const {
  const std::string id = std::to_string(job_id);
  // The comment is the reason's record; a failure to set it does not stop the cancel.
  (void)Run({commands_.scontrol, "update", "JobId=" + id, "Comment=" + reason});
  if (auto out = Run({commands_.scancel, id}); !out) return out.error();
  return {};
}

Expected<void> Client::DrainNode(const std::string& node, const std::string& reason) const {
  auto out =
      Run({commands_.scontrol, "update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason});
  if (!out) return out.error();
  return {};
}

int Client::Series() const {
  if (series_) return *series_;
  auto out = Run({commands_.scontrol, "--version"});
  if (!out) return 0;  // asked again next time
  series_ = ParseSlurmSeries(*out);
  return *series_;
}

Expected<std::vector<SlurmJob>> Client::Jobs() const {
  // Room for an eighth more jobs than last time: no copy as the answer
  // grows. Read into the last answer's memory: faulting 28 MiB of fresh
  // pages in at each answer was a fifth of reading it (10,000 jobs, perf).
  auto out = Run({commands_.squeue, "-t", "all", "--json"}, last_jobs_bytes_ + last_jobs_bytes_ / 8,
                 &jobs_room_);
  if (!out) return out.error();
  last_jobs_bytes_ = out->size();
  auto answer = jobs_reader_.Read(*out);
  jobs_room_ = std::move(*out);
  if (!answer) return Error{commands_.squeue + ": " + answer.error().message};
  if (!answer->errors.empty()) return Error{commands_.squeue + ": " + Joined(answer->errors)};
  return std::move(answer->jobs);
}

Expected<std::vector<SlurmNode>> Client::Nodes() const {
  const int series = Series();
  // scontrol's --json arrived in 23.02; an unknown version tries it first.
  std::vector<std::string> argv =
      series != 0 && series < 2302
          ? std::vector<std::string>{commands_.sinfo, "--json"}
          : std::vector<std::string>{commands_.scontrol, "show", "nodes", "--json"};
  auto out = Run(argv);
  if (!out) return out.error();
  auto answer = ParseNodesJson(*out);
  if (!answer) return Error{argv.front() + ": " + answer.error().message};
  if (!answer->errors.empty()) return Error{argv.front() + ": " + Joined(answer->errors)};
  return std::move(answer->nodes);
}

}  // namespace jobmon::slurm
