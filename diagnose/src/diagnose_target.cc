#include "jobmon/diagnose/diagnose_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>

#include "access/job_scope.h"
#include "compare/compare.h"
#include "diagnose.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"
#include "jobmon/triage/triage_job.h"
#include "scrape_interval.h"
#include "window.h"

namespace jobmon::diagnose {
namespace {

using Status = TargetOutcome::Status;

TargetOutcome Failed(Status status, std::string error) {
  TargetOutcome out;
  out.status = status;
  out.error = std::move(error);
  return out;
}

void Say(const TargetRequest& request, std::string_view line) {
  if (request.progress) request.progress(line);
}

// The whole log up to the size triage reads whole
// (triage::kWholeScanFallbackBytes); a larger one (a sparse terabyte costs
// nothing to make) by its head and tail only, said in the warnings.
constexpr size_t kHeadScanBytes = size_t{64} << 20;
constexpr size_t kTailScanBytes = size_t{256} << 20;

Expected<triage::ScanFacts> ScanLogBounded(const triage::LogScanner& scanner,
                                           const std::string& log_path,
                                           std::vector<std::string>& warnings) {
  auto file = OpenCallerFile(log_path);
  if (!file) return file.error();
  const auto size = static_cast<uint64_t>(file->st.st_size);
  if (size <= triage::kWholeScanFallbackBytes) return scanner.ScanFd(file->fd.get());
  warnings.push_back(
      fmt::format("the log is {} MiB: only its first {} MiB and last {} MiB were read", size >> 20,
                  kHeadScanBytes >> 20, kTailScanBytes >> 20));
  return scanner.ScanHeadAndTailBounded(file->fd.get(), size, kHeadScanBytes, kTailScanBytes);
}

// The job's log triaged, for the window and the auto playbooks; a log that
// cannot be read weakens the diagnosis, it does not stop it.
std::optional<triage::TriageReport> TriageLog(const TargetRequest& request,
                                              const std::string& log_path,
                                              std::vector<std::string>& warnings) {
  if (log_path.empty()) {
    warnings.push_back("no job log found: no triage window, auto picks the health sweep");
    return std::nullopt;
  }
  Say(request, "triage " + log_path);
  auto scanner = triage::LogScanner::Create({request.step_regex});
  if (!scanner) {
    warnings.push_back("triage: " + scanner.error().message);
    return std::nullopt;
  }
  auto facts = ScanLogBounded(**scanner, log_path, warnings);
  if (!facts) {
    warnings.push_back("triage of " + log_path + ": " + facts.error().message);
    return std::nullopt;
  }
  triage::JobContext job;
  job.log_path = log_path;
  job.ask_slurm = true;
  if (request.stall_min_seconds) job.analysis.stall_min_seconds = *request.stall_min_seconds;
  if (request.stall_factor) job.analysis.stall_factor = *request.stall_factor;
  return triage::TriageJob(*facts, job);
}

// The first bytes of a log (its header, for the config comparison) and its
// lines up to a bound (stamped step lines, for the step map when the TSDB
// has no tb_step): bounded so a multi-GiB log costs no more than triage.
constexpr size_t kLogHeaderBytes = size_t{256} << 10;
constexpr size_t kLogStepBytes = size_t{64} << 20;

FilePrefix ReadLogPrefix(const std::string& path, size_t limit) {
  auto prefix = ReadFilePrefix(path, limit);
  return prefix ? std::move(prefix.value()) : FilePrefix{};
}

std::vector<StepTime> LogSteps(const std::string& log_path, std::vector<std::string>& warnings) {
  if (log_path.empty()) return {};
  FilePrefix log = ReadLogPrefix(log_path, kLogStepBytes);
  std::vector<std::string_view> lines;
  std::string_view rest = log.text;
  while (!rest.empty()) {
    size_t end = rest.find_first_of("\r\n");
    lines.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  // absl/glog stamps carry no year: this year's (a job spanning New Year is
  // rare and only shifts its step map, which tb_step normally replaces).
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  auto steps = StepMapFromLogLines(lines, utc.tm_year + 1900);
  if (log.cut && !steps.empty())
    warnings.push_back(
        fmt::format("the log's step map covers its first {} MiB only", kLogStepBytes >> 20));
  return steps;
}

bool IsJobId(const std::string& argument) {
  return !argument.empty() && std::all_of(argument.begin(), argument.end(),
                                          [](unsigned char c) { return std::isdigit(c); });
}

// The job's TSDB: the store with --store; else its own (OpenTsdb), and the
// store when a configured one exists and the job has nothing of its own
// left to open (no archive, no TSDB directory, not running).
Expected<std::unique_ptr<TsdbSession>> OpenJobTsdb(const TargetRequest& request,
                                                   const ResolvedTarget& target,
                                                   const std::string& missing,
                                                   const AccessOptions& options, bool& from_store) {
  from_store = request.store && request.store_only;
  if (from_store) return OpenCentralStore(target.job_id, *request.store, options);
  if (!missing.empty()) {
    Say(request,
        fmt::format("{}; falling back to the central store {}", missing, request.store->url));
    from_store = true;
    return OpenCentralStore(target.job_id, *request.store, options);
  }
  auto session = OpenTsdb(target, options);
  const bool gone =
      target.archive_path.empty() && target.tsdb_dir.empty() && !options.prometheus_url &&
      !(target.manifest &&
        (target.manifest->state == "starting" || target.manifest->state == "running"));
  if (session || !request.store || !gone || target.job_id.empty()) return session;
  Say(request, fmt::format("{}; falling back to the central store {}", session.error().message,
                           request.store->url));
  from_store = true;
  return OpenCentralStore(target.job_id, *request.store, options);
}

// One job opened and diagnosed; the session (its read-only Prometheus)
// lives as long as this, so a comparison can still query it.
struct OpenedJob {
  std::unique_ptr<TsdbSession> session;
  std::unique_ptr<CancellablePromSource> source;
  Diagnosis diagnosis;
  std::string log_header;
};

Expected<OpenedJob> OpenAndDiagnose(const TargetRequest& request, const std::string& argument,
                                    const std::string& log_override,
                                    const std::vector<std::string>& playbooks, bool picture,
                                    TargetOutcome::Status& failure) {
  auto resolved = ResolveTarget(argument);
  ResolvedTarget target;
  std::string missing;  // why the job has nothing of its own to open
  if (resolved) {
    target = *resolved;
  } else if (request.store && IsJobId(argument)) {
    // No diag dir anywhere: the store knows the job by its id alone.
    target.kind = TargetKind::kJobId;
    target.job_id = argument;
    missing = resolved.error().message;
  } else {
    failure = Status::kInputError;
    return resolved.error();
  }
  if (!log_override.empty()) target.log_path = log_override;

  DiagnoseInputs inputs;
  inputs.job = target.job_id.empty() ? argument : target.job_id;
  inputs.playbooks = playbooks;
  inputs.picture = picture;
  inputs.manifest = target.manifest;
  std::vector<std::string> warnings;
  if (!target.diag_dir.empty()) {
    // The interval the plugin configured: the fallback when the data
    // cannot tell (Diagnose reads it from the `up` samples first).
    DiagLayout layout{target.diag_dir};
    if (auto yaml = ReadUserFile(layout.prometheus_config(), size_t{1} << 20); yaml.ok()) {
      if (auto seconds = ScrapeIntervalFromConfig(yaml.value())) {
        inputs.scrape_interval_seconds = *seconds;
        inputs.scrape_interval_from_config = true;
      }
    }
  }
  inputs.triage = TriageLog(request, target.log_path, warnings);
  inputs.log_steps = LogSteps(target.log_path, warnings);

  AccessOptions options;
  options.prometheus_url = request.compare.empty() ? request.prometheus_url : std::nullopt;
  options.prometheus_binary = request.prometheus_binary;
  options.query_timeout = request.query_timeout_seconds;
  options.progress = request.progress;
  options.cleanup_on_signal = request.cleanup_on_signal;
  options.job_ended = request.job_ended;
  OpenedJob job;
  bool from_store = false;
  auto session = OpenJobTsdb(request, target, missing, options, from_store);
  if (!session) {
    failure = Status::kAccessError;
    return Error{argument + ": " + session.error().message};
  }
  if (from_store) {
    warnings.push_back(request.store_only
                           ? "read from the cluster's central store (--store)"
                           : "the job's archive and TSDB are gone: read from the cluster's "
                             "central store");
  }
  job.session = std::move(session.value());
  if (auto range = job.session->DataRange(); range && *range) {
    inputs.tsdb_range = **range;
  } else {
    warnings.push_back(range ? "the TSDB holds no data"
                             : "the TSDB's time range: " + range.error().message);
  }
  job.source = std::make_unique<CancellablePromSource>(job.session->source(), request.cancel);
  job.diagnosis = Diagnose(*job.source, inputs, request.progress);
  job.diagnosis.warnings.insert(job.diagnosis.warnings.begin(), warnings.begin(), warnings.end());
  if (from_store)
    job.diagnosis.central_store =
        CentralStoreSource{request.store->url, JobMatchers(target.job_id, request.store->cluster),
                           !request.store_only};
  if (!target.log_path.empty())
    job.log_header = ReadLogPrefix(target.log_path, kLogHeaderBytes).text;
  return job;
}

TargetOutcome Run(const TargetRequest& request) {
  Status failure = Status::kAccessError;
  auto main_job = OpenAndDiagnose(request, request.argument, request.log_path, request.playbooks,
                                  request.picture, failure);
  if (!main_job) return Failed(failure, main_job.error().message);
  TargetOutcome out;
  if (!request.compare.empty()) {
    // The other job: discovery and window only, then side by side. Its
    // read-only Prometheus takes the next free port (the first holds one).
    Say(request, "compare: opening " + request.compare);
    auto other = OpenAndDiagnose(request, request.compare, "", {"none"}, false, failure);
    if (!other) return Failed(failure, other.error().message);
    Say(request, "compare: " + request.compare + " vs " + request.argument);
    main_job.value().diagnosis.comparison =
        Compare(*other->source, other->diagnosis.context, *main_job->source,
                main_job->diagnosis.context, other->log_header, main_job->log_header);
  }
  out.diagnosis = std::move(main_job.value().diagnosis);
  return out;  // the sessions (and their Prometheus) end here
}

}  // namespace

TargetOutcome DiagnoseTarget(const TargetRequest& request) {
  try {
    return Run(request);
  } catch (const DiagnosisCancelled&) {
    return Failed(Status::kCancelled, "abandoned (timeout)");
  } catch (const std::exception& e) {
    return Failed(Status::kAccessError, fmt::format("diagnosis stopped: {}", e.what()));
  }
}

void CancellablePromSource::ThrowIfCancelled() const {
  if (cancel_ && cancel_->load()) throw DiagnosisCancelled{};
}

Expected<std::vector<Series>> CancellablePromSource::QueryRange(std::string_view promql,
                                                                const TimeRange& range,
                                                                double step_seconds) {
  ThrowIfCancelled();
  return inner_.QueryRange(promql, range, step_seconds);
}

Expected<std::vector<Series>> CancellablePromSource::QueryInstant(std::string_view promql,
                                                                  double time) {
  ThrowIfCancelled();
  return inner_.QueryInstant(promql, time);
}

Expected<std::vector<std::string>> CancellablePromSource::LabelValues(
    std::string_view label, const std::optional<TimeRange>& range, std::string_view match) {
  ThrowIfCancelled();
  return inner_.LabelValues(label, range, match);
}

}  // namespace jobmon::diagnose
