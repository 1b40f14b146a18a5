#pragma once
// From alert to recovery (docs/recovery.md): what the monitor does about a
// hang incident of a job whose owner chose more than an alert
// (--diag-on-hang, diag_option.h), within what the admins allow
// ([recovery] in jobmon.toml). Pure: the incident, the job's choice, the
// policy, the clock and the steps already taken in, the next step out. The
// steps taken are kept in the daemon's store (state_store.h), so a restart
// neither repeats nor skips one; the daemon runs each step through Slurm's
// own commands (slurm/client.h) and records it after it ran.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/diag_option.h"

namespace jobmon::monitor {

struct RecoveryPolicy {
  // The actions the admins allow at all; none by default, so nothing is
  // ever done unless an admin says so.
  std::vector<OnHang> allowed;
  // The incident classes that may trigger an action (a class, or a family:
  // "hang" is every hang/*).
  std::vector<std::string> classes = {"hang/busy-wait", "hang/node-death", "hang/io-wait"};
  double grace_seconds = 300;   // after the firing alert: time for a person to hold it
  std::string signal = "USR1";  // the checkpoint signal the job's code handles
  double checkpoint_wait_seconds = 600;
  int max_requeues = 2;  // per job; beyond it, an alert only
  bool drain = false;    // drain the node that stopped first after a requeue
  bool dry_run = false;  // record and announce what would be done, do nothing
};

// One step taken (or refused), as the store keeps it.
struct RecoveryStep {
  std::string step;    // kStep* below
  double at = 0;       // unix seconds
  std::string detail;  // what was done, in words (and the command's error)
};

inline constexpr std::string_view kStepRefused = "refused";  // the policy forbids it: final
inline constexpr std::string_view kStepHeld = "held";        // a person held it: final
inline constexpr std::string_view kStepSignal = "signal";
inline constexpr std::string_view kStepCheckpoint = "checkpoint";  // its line came
inline constexpr std::string_view kStepCheckpointTimeout = "checkpoint-timeout";
inline constexpr std::string_view kStepRequeue = "requeue";
inline constexpr std::string_view kStepCancel = "cancel";
inline constexpr std::string_view kStepDrain = "drain";
inline constexpr std::string_view kStepFailed = "failed";  // a command failed: final
inline constexpr std::string_view kStepDone = "done";      // nothing more to do: final

struct RecoveryInputs {
  OnHang choice = OnHang::kNotify;
  std::string incident_class;
  double alerted_at = 0;  // the firing alert
  double now = 0;
  bool held = false;                         // `jobmon hold JOB`
  bool slurm_reachable = true;               // never act while the controller does not answer
  std::optional<double> last_checkpoint_at;  // the job's latest checkpoint line
  std::optional<std::string> culprit_node;   // the node the evidence names
  int requeues_before = 0;                   // this job's requeues for earlier incidents
  std::vector<RecoveryStep> taken;           // this incident's, in order
};

struct RecoveryAction {
  enum class Kind { kNone, kRecord, kSignal, kRequeue, kCancel, kDrain };
  Kind kind = Kind::kNone;
  std::string step;    // what to record once it ran
  std::string detail;  // in words, for the record and the follow-up
  std::string signal;  // kSignal
  std::string node;    // kRequeue: excluded (may be empty); kDrain: drained
};

// The next thing to do; kNone while waiting (grace, the checkpoint) or
// when everything is done.
RecoveryAction NextRecoveryAction(const RecoveryInputs& in, const RecoveryPolicy& policy);

// Whether the incident's recovery has ended (a final step was recorded).
bool RecoveryFinished(const std::vector<RecoveryStep>& taken);

}  // namespace jobmon::monitor
