#pragma once
// The daemon's core, one poll cycle at a time (docs/monitor.md, "Progress and
// incidents"): refresh the job list from Slurm when due, scrape the --diag
// jobs' exporters, follow every log, and move each job through
//   starting -> training -> stalled -> incident -> resumed / ended,
// classifying incidents from the rolling window and the log. The clock is
// a parameter, so tests drive it without waiting.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobmon/alerts/notifier.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/diagnose_target.h"
#include "jobmon/diagnose/diagnosis_report.h"
#include "jobmon/monitor/diagnosis_followup.h"
#include "jobmon/monitor/event_log.h"
#include "jobmon/monitor/job_progress.h"
#include "jobmon/monitor/job_source.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/monitor_config.h"
#include "jobmon/monitor/monitor_stats.h"
#include "jobmon/monitor/slurm_outage.h"
#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"

namespace jobmon::monitor {

class EvidenceFeed;
struct FeedContext;

class Monitor {
 public:
  // `diagnoser`: the end-of-job diagnosis ([monitor] diagnose_at_end);
  // none: `jobmon diagnose` in a child process as the job's user
  // (child_diagnoser.h); tests give a fake.
  Monitor(MonitorConfig config, StateStore& store, JobSource& source, alerts::Notifier& notifier,
          EventLog& log, diagnose::ReportDiagnoser diagnoser = {});
  Monitor(MonitorConfig config, StateStore& store, JobSource& source, alerts::Notifier& notifier,
          EventLog& log, diagnose::TargetDiagnoser diagnoser)
      : Monitor(std::move(config), store, source, notifier, log,
                diagnose::InProcess(std::move(diagnoser))) {}
  ~Monitor();

  // Picks up every job the store knows that has not ended, with its log
  // position, learned statistics and open incident.
  Expected<void> Restore(double now);
  // SIGHUP: new thresholds and selections apply from the next cycle.
  void Reconfigure(MonitorConfig config);

  void Cycle(double now);

  const MonitorStats& stats() const { return stats_; }
  const MonitorConfig& config() const { return config_; }

 private:
  struct Tracked {
    JobRecord record;
    std::unique_ptr<JobProgress> progress;
    std::unique_ptr<MetricWindow> window;  // --diag jobs only
    // The job's user, from Slurm (or, after a restart, its user name until
    // Slurm answers): every file of the job is read as this user, and
    // nothing is read while it is unknown.
    std::optional<JobUser> user;
    uint64_t log_polled_in = 0;  // the cycle that last read the log
    std::string tunnel_command;  // rebuilt from Slurm's head node and the manifest's port (the feed
                                 // reads it)
    std::string slurm_exit_code;  // Slurm's ExitCode at the last poll ("" unknown)
    // The end-of-job scan, done before the cycle's transaction.
    std::optional<Expected<triage::ScanFacts>> end_facts;
    std::set<std::string> warned;  // per-job warnings already logged once
    std::optional<IncidentRecord> open;
    bool heartbeat_handled = false;
    bool power_baseline = false;  // the window had a training power baseline at the last save
    // The owner's --diag-on-hang, from the manifest (read once, at the first
    // open incident); nullopt until read.
    std::optional<OnHang> on_hang;
    bool ended = false;
    ProgressRecord saved;  // what the store has, to skip unchanged writes
  };

  // An incident about to open: its class and contents, and the triage of
  // the log that goes with its alert.
  struct NewIncident {
    std::string klass, summary;
    std::vector<std::string> evidence, hosts;
    std::optional<triage::TriageReport> report;
  };

  // The cycle's steps: fetch (Slurm, when due), scrape, read the logs of
  // ending jobs, then in one transaction apply Slurm's view and poll each
  // job (the incident policy decides), forget old ended jobs, persist.
  std::optional<Expected<std::vector<slurm::SlurmJob>>> FetchJobsIfDue(double now);
  Expected<std::vector<slurm::SlurmJob>> FetchJobs(double now);
  void RefreshJobs(double now, const Expected<std::vector<slurm::SlurmJob>>& listed);
  // RefreshJobs' steps. False: no answer, or one not believed yet
  // (slurm_outage.h), so nothing may be ended; the outage or its end noted.
  bool SlurmAnswerHolds(double now, const Expected<std::vector<slurm::SlurmJob>>& listed);
  // One followed job as Slurm lists it: its user, state and exit code; ended
  // when Slurm says it has.
  void UpdateFromSlurm(Tracked& t, const slurm::SlurmJob& job, double now);
  void Track(const slurm::SlurmJob& job, const std::string& source, const std::string& log_path,
             const std::string& diag_dir, double now);
  Tracked NewTracked(const JobRecord& record, double job_start) const;
  // The --diag jobs' evidence, from the feed [monitor] evidence names
  // (evidence/evidence_feed.h), which never blocks the transaction.
  void GatherEvidence(double now);
  FeedContext MakeFeedContext();  // what the feed may use of the monitor
  void PollJobs(double now);
  void PollLogs(double now);  // every followed job's log, before the store is asked
  void ForgetEndedJobs(double now);
  void RecordCycle(std::chrono::steady_clock::time_point started);
  void PollLog(Tracked& job, double now);  // reads what the log gained; warns if it cannot
  // Slurm did not answer, or its answer is not believed (slurm_outage.h).
  void NoteSlurmOutage(double now);
  void NoteSlurmAnswered(double now);
  // A stall that is the job's end seen without Slurm's word (COMPLETING, or
  // during a Slurm outage every host gone or the log's own end): no incident.
  bool EndLooksLikeStall(Tracked& t, const std::optional<StallClassification>& stall, double now);
  // Logs a per-job warning the first time only (a refused file is refused
  // again every cycle).
  void WarnOnce(Tracked& job, const std::string& event, const std::string& error);
  // The bounded end-of-job scan of the log, as the job's user.
  Expected<triage::ScanFacts> ScanEndOfJob(const Tracked& job) const;
  void ScanEndingJobs(const std::vector<slurm::SlurmJob>& listed);
  // From the first to the last step of this run: where the power baseline comes from.
  std::pair<double, double> TrainingSpan(const Tracked& job, const ProgressState& state,
                                         double fallback_until) const;
  void PollJob(Tracked& job, double now);
  // Recovery (recovery.h): after the cycle's transaction, since its steps
  // wait on Slurm's commands; each step recorded as it ran, and announced.
  void RecoverJobs(double now);
  void Recover(Tracked& job, double now);
  // A heartbeat accusation not judged yet: judged once, and the policy decides.
  void OnHeartbeat(Tracked& job, double now);
  void OnEnded(Tracked& job, const std::string& slurm_state, double now);
  // The end-of-job diagnosis: queued at job end (its archive awaited),
  // polled before the cycle's transaction, its outcome stored (and sent as
  // a follow-up of the incident the job ended with) inside it.
  void QueueDiagnosis(const Tracked& job, int64_t incident_id, double now);
  // Restore(): end-of-job diagnoses a killed daemon left pending, queued again.
  void ResumeDiagnoses(double now);
  static constexpr double kResumeDiagnosisWithin = 3600;
  std::vector<DiagnosisOutcome> PollDiagnoses(double now);
  void ApplyDiagnosis(const DiagnosisOutcome& outcome, double now);
  // The contents of the incidents the policy opens.
  StallClassification ClassifyStallOf(const Tracked& job, const ProgressState& state,
                                      double now) const;
  NewIncident StallIncident(Tracked& job, const ProgressState& state,
                            const StallClassification& stall, double now);
  NewIncident SlowdownIncident(const ProgressState& state) const;
  // `stall`: the monitor's stall verdict, when triaging a live job it judged stalled.
  std::optional<triage::TriageReport> TriageLog(Tracked& job, const std::string& slurm_state,
                                                double now, const ProgressState* stall = nullptr);

  void Open(Tracked& job, NewIncident incident, double now);
  void Close(Tracked& job, const std::string& reason, double now);
  void Send(const Tracked& job, const IncidentRecord& incident, const std::string& status,
            double at, const triage::TriageReport* report);
  void Notify(const alerts::Alert& alert);
  // The firing's chart (PNG), kept in the store for `jobmon status --html`;
  // "" when charts are off or gnuplot failed (logged, counted).
  std::string DrawChart(const Tracked& job, const IncidentRecord& incident,
                        const std::string& title, double now);
  void SaveProgress(Tracked& job, double now);
  // While a --diag job trains (not stalled: a stall must not replace them),
  // its hosts' baselines (MetricWindow::Baselines) into the store once a
  // minute (every 5 s until a host has its power baseline), for a restart
  // after it hangs (Restore puts them back);
  // deleted when it ends. `baselines_due_at_`: when next, per job.
  void SaveBaselines(double now);
  std::map<uint32_t, double> baselines_due_at_;
  void Check(const Expected<void>& result, const char* what);

  MonitorConfig config_;
  StateStore& store_;
  JobSource& source_;
  alerts::Notifier& notifier_;
  EventLog& log_;
  std::shared_ptr<const triage::LogScanner> scanner_;
  std::map<uint32_t, Tracked> jobs_;
  double next_slurm_poll_ = 0;
  bool slurm_warned_ = false;
  SlurmOutage outage_;
  std::unique_ptr<EvidenceFeed> feed_;  // rebuilt when [monitor] evidence changes
  uint64_t cycle_number_ = 0;
  MonitorStats stats_;
  bool child_diagnoser_;  // the default: rebuilt when jobmon_binary changes
  diagnose::ReportDiagnoser diagnoser_;
  std::unique_ptr<DiagnosisFollowUp> followup_;

 public:
  // At job end: the first and the last bytes of the log are scanned, not
  // the middle (a sparse terabyte costs what 9 MiB cost).
  static constexpr size_t kEndScanHead = size_t{1} << 20;
  static constexpr size_t kEndScanTail = size_t{8} << 20;
};

}  // namespace jobmon::monitor
