// The Monitor's recovery steps (recovery.h): run after the cycle's transaction, recorded, sent.
#include <fmt/format.h>

#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/incident_alert.h"
#include "jobmon/monitor/monitor.h"
#include "jobmon/monitor/recovery.h"

namespace jobmon::monitor {

void Monitor::RecoverJobs(double now) {
  for (auto& [id, t] : jobs_) {
    if (!t.ended && t.open && t.user && !t.record.diag_dir.empty()) Recover(t, now);
  }
}

void Monitor::Recover(Tracked& t, double now) {
  const uint32_t job = t.record.job_id;
  if (!t.on_hang) {
    auto manifest = ReadDiagManifest(t.record.diag_dir, t.user, t.record.node_list);
    if (!manifest) return;  // asked again next cycle
    t.on_hang = manifest->on_hang;
  }
  if (*t.on_hang == OnHang::kNotify) return;
  auto taken = store_.RecoverySteps(t.open->id);
  auto held = store_.RecoveryHeld(job);
  auto requeues = store_.RecoveryRequeues(job);
  if (!taken || !held || !requeues) return;
  if (RecoveryFinished(*taken)) return;
  RecoveryInputs in;
  in.choice = *t.on_hang;
  in.incident_class = t.open->klass;
  in.alerted_at = t.open->opened_at;
  in.now = now;
  in.held = *held;
  in.slurm_reachable = stats_.slurm_reachable;
  in.last_checkpoint_at = t.progress->checkpoint_saved_at();
  if (t.open->hosts.size() == 1) in.culprit_node = t.open->hosts.front();
  in.taken = *taken;
  int this_incident = 0;
  for (const RecoveryStep& s : *taken) this_incident += s.step == kStepRequeue;
  in.requeues_before = *requeues - this_incident;
  const RecoveryAction action = NextRecoveryAction(in, config_.recovery);
  if (action.kind == RecoveryAction::Kind::kNone) return;

  RecoveryStep step{action.step, now, action.detail};
  Expected<void> done;
  if (!config_.recovery.dry_run) {
    const std::string reason = fmt::format("jobmon: {} (incident {})", t.open->klass, t.open->id);
    switch (action.kind) {
      case RecoveryAction::Kind::kSignal:
        done = source_.SignalJobSteps(job, action.signal);
        break;
      case RecoveryAction::Kind::kRequeue:
        done = source_.RequeueExcluding(job, action.node);
        break;
      case RecoveryAction::Kind::kCancel:
        done = source_.CancelJob(job, reason);
        break;
      case RecoveryAction::Kind::kDrain:
        done = source_.DrainNode(action.node, reason);
        break;
      default:
        break;
    }
  }
  if (!done) {
    step = {std::string(kStepFailed), now,
            fmt::format("{}: {}", action.detail, done.error().message)};
  }
  Check(store_.AddRecoveryStep(t.open->id, job, step), "record recovery step");
  ++stats_.recovery_steps[step.step];
  log_.Warn("recovery_step", {{"job", std::to_string(job)},
                              {"incident", std::to_string(t.open->id)},
                              {"step", step.step},
                              {"detail", step.detail}});
  alerts::Alert alert =
      BuildAlert({config_.cluster, t.tunnel_command}, t.record, *t.open, "firing", now, nullptr);
  alert.recovery_step = step.step;
  alert.recovery = step.detail;
  Notify(alert);
}

}  // namespace jobmon::monitor
