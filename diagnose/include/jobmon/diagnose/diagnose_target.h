#pragma once
// One diagnosis end to end, for `jobmon diagnose` and the monitor's
// end-of-job attachment: resolve what was named, triage the job's log, open
// its TSDB (tsdb_access.h), run the playbooks (diagnose.h), close the TSDB.
// Callers take it as a TargetDiagnoser so tests inject a fake.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/central_store.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose {

struct TargetRequest {
  std::string argument;  // job id | log | diag dir | archive | TSDB dir
  // Playbook names, "auto" (by the triage class) or "health" (the sweep).
  std::vector<std::string> playbooks = {"auto"};
  std::optional<std::string> prometheus_url;  // query this, start nothing
  // The cluster's central store (central_store.h). With store_only the
  // job's metrics come from it (`--store`); otherwise it is the fallback for
  // a job id whose archive or TSDB is gone ([diagnose] store_url), said on
  // stderr (progress) and in the report.
  std::optional<CentralStore> store;
  bool store_only = false;
  std::string log_path;    // the job's log, when not the one found
  std::string compare;     // another target, side by side
  std::string step_regex;  // the triage's custom step lines ([triage])
  // The one stall rule's floor and factor ([stall]), as `jobmon triage`
  // and the monitor read them: no step for this long before a cancel is a
  // hang (nullopt: the rule's default).
  std::optional<double> stall_min_seconds;
  std::optional<double> stall_factor;  // [stall] k
  std::string prometheus_binary = "/usr/bin/prometheus";
  double query_timeout_seconds = 120;
  std::function<void(std::string_view)> progress;
  // Set by another thread to abandon the diagnosis: the next query throws
  // DiagnosisCancelled and the TSDB session (its Prometheus) is closed.
  std::shared_ptr<const std::atomic<bool>> cancel;
  // AccessOptions::cleanup_on_signal: the CLI's default; the monitor sets
  // false, as its own SIGTERM handling must stay its own.
  bool cleanup_on_signal = true;
  // The job's user (from Slurm), as whom the diagnosis reads the job's
  // files; the monitor's child diagnoser becomes this user.
  std::optional<JobUser> user;
  // AccessOptions::job_ended: the monitor's end-of-job run.
  bool job_ended = false;
  // The chart's data too (Diagnosis::picture, `--html`), of the job named
  // by `argument` (not of `compare`'s).
  bool picture = false;
};

// Not a std::exception: the playbooks' own catch-alls must let it through.
struct DiagnosisCancelled {};

struct TargetOutcome {
  enum class Status { kDiagnosed, kInputError, kAccessError, kCancelled };
  Status status = Status::kDiagnosed;
  std::string error;  // what failed, for the other statuses
  Diagnosis diagnosis;
};

using TargetDiagnoser = std::function<TargetOutcome(const TargetRequest&)>;

// The real one. Never throws; every failure is an outcome.
TargetOutcome DiagnoseTarget(const TargetRequest& request);

// A PromSource that throws DiagnosisCancelled before each query once
// `cancel` is set, so a diagnosis stops within one query.
class CancellablePromSource : public PromSource {
 public:
  CancellablePromSource(PromSource& inner, std::shared_ptr<const std::atomic<bool>> cancel)
      : inner_(inner), cancel_(std::move(cancel)) {}
  Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                           double step_seconds) override;
  Expected<std::vector<Series>> QueryInstant(std::string_view promql, double time) override;
  Expected<std::vector<std::string>> LabelValues(
      std::string_view label, const std::optional<TimeRange>& range = std::nullopt,
      std::string_view match = {}) override;
  std::string Describe() const override { return inner_.Describe(); }

 private:
  void ThrowIfCancelled() const;
  PromSource& inner_;
  std::shared_ptr<const std::atomic<bool>> cancel_;
};

}  // namespace jobmon::diagnose
