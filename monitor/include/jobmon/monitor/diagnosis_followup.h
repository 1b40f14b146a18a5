#pragma once
// The end-of-job diagnosis from job end to an outcome the cycle applies.
// An ended --diag job first waits for its archive: the epilog's archiver
// sets the manifest's state to "archived" when the TSDB is packed (or
// "archive_failed", or "ended" when archiving is off). Within the timeout
// an archived job is diagnosed beside the cycle (EndDiagnosis, its own
// timeout again); every job ends as one outcome. Polled from the cycle,
// which it never blocks: the manifest is read through a callback (as the
// job's user), the diagnosis runs beside it (end_diagnosis.h).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/diagnose_target.h"
#include "jobmon/monitor/end_diagnosis.h"

namespace jobmon::monitor {

// Pure: what the manifest's state says about the archive.
struct ArchiveCheck {
  enum class Readiness { kWait, kReady, kNone };
  Readiness readiness = Readiness::kWait;
  std::string why;  // kNone: why there will be no archive
};
ArchiveCheck CheckArchiveState(const std::string& manifest_state);

struct DiagnosisOutcome {
  enum class Kind { kDiagnosed, kFailed, kTimedOut, kSkipped };
  Kind kind = Kind::kDiagnosed;
  uint32_t job_id = 0;
  int64_t incident_id = 0;  // the incident the job ended with; 0: none
  std::string verdicts;     // kDiagnosed: one line per playbook
  std::string markdown;     // kDiagnosed: the report
  // What `jobmon status` shows: the verdicts, else why there are none.
  std::string summary;
};

class DiagnosisFollowUp {
 public:
  struct EndedJob {
    uint32_t job_id = 0;
    int64_t incident_id = 0;
    std::string diag_dir;
    std::optional<JobUser> user;
    std::string node_list;
    double ended_at = 0;
  };
  // The manifest's state, read as the job's user; an error: not readable (yet).
  using StateReader = std::function<Expected<std::string>(const EndedJob&)>;

  DiagnosisFollowUp(diagnose::ReportDiagnoser diagnoser, double timeout_seconds);
  DiagnosisFollowUp(diagnose::TargetDiagnoser diagnoser, double timeout_seconds)
      : DiagnosisFollowUp(diagnose::InProcess(std::move(diagnoser)), timeout_seconds) {}

  void Add(EndedJob job);
  // `now`: the monitor's clock (seconds), for the archive wait and the diagnosis.
  std::vector<DiagnosisOutcome> Poll(double now, const StateReader& read_state);
  size_t waiting() const { return waiting_.size(); }
  size_t pending() const { return waiting_.size() + running_.pending(); }

 private:
  double timeout_;
  std::vector<EndedJob> waiting_;  // for their archive
  EndDiagnosis running_;
};

}  // namespace jobmon::monitor
