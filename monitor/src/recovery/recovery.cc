#include "jobmon/monitor/recovery.h"

#include <fmt/format.h>

#include <algorithm>

namespace jobmon::monitor {

namespace {

bool Final(std::string_view step) {
  return step == kStepRefused || step == kStepHeld || step == kStepFailed || step == kStepDone;
}

const RecoveryStep* Find(const std::vector<RecoveryStep>& taken, std::string_view step) {
  for (const RecoveryStep& s : taken) {
    if (s.step == step) return &s;
  }
  return nullptr;
}

bool ClassAllowed(const std::string& klass, const std::vector<std::string>& classes) {
  return std::any_of(classes.begin(), classes.end(), [&](const std::string& c) {
    return klass == c || klass.starts_with(c + "/");
  });
}

RecoveryAction Record(std::string_view step, std::string detail) {
  return {RecoveryAction::Kind::kRecord, std::string(step), std::move(detail), "", ""};
}

std::string Allowed(const std::vector<OnHang>& allowed) {
  std::string out;
  for (OnHang a : allowed) out += (out.empty() ? "" : ", ") + std::string(ToString(a));
  return out.empty() ? "none" : out;
}

}  // namespace

bool RecoveryFinished(const std::vector<RecoveryStep>& taken) {
  return std::any_of(taken.begin(), taken.end(),
                     [](const RecoveryStep& s) { return Final(s.step); });
}

RecoveryAction NextRecoveryAction(const RecoveryInputs& in, const RecoveryPolicy& policy) {
  if (in.choice == OnHang::kNotify || RecoveryFinished(in.taken)) return {};
  const std::string choice(ToString(in.choice));
  if (std::find(policy.allowed.begin(), policy.allowed.end(), in.choice) == policy.allowed.end()) {
    return Record(kStepRefused, fmt::format("the job asks to {} on a hang; this cluster allows: {}",
                                            choice, Allowed(policy.allowed)));
  }
  if (!ClassAllowed(in.incident_class, policy.classes)) {
    return Record(kStepRefused,
                  fmt::format("{} is not a class recovery acts on here", in.incident_class));
  }
  const RecoveryStep* signalled = Find(in.taken, kStepSignal);
  if (in.held && !signalled) return Record(kStepHeld, "held before anything was done");
  if (in.held) return Record(kStepHeld, "held after the signal: no requeue or cancel");
  if (in.now < in.alerted_at + policy.grace_seconds || !in.slurm_reachable) return {};
  const std::string dry = policy.dry_run ? "dry run: would " : "";
  if (!signalled) {
    RecoveryAction a{
        RecoveryAction::Kind::kSignal, std::string(kStepSignal),
        fmt::format("{}send SIG{} to the job's steps (its checkpoint signal)", dry, policy.signal),
        policy.signal, ""};
    return a;
  }
  if (in.choice == OnHang::kSignal) return Record(kStepDone, "signalled; the job decides the rest");

  // The checkpoint the signal asked for: its line, or the wait runs out.
  const bool waited = Find(in.taken, kStepCheckpoint) || Find(in.taken, kStepCheckpointTimeout);
  if (!waited) {
    if (in.last_checkpoint_at && *in.last_checkpoint_at >= signalled->at) {
      return Record(kStepCheckpoint,
                    fmt::format("the job's checkpoint line came {:.0f}s after the signal",
                                *in.last_checkpoint_at - signalled->at));
    }
    if (in.now < signalled->at + policy.checkpoint_wait_seconds) return {};
    return Record(kStepCheckpointTimeout,
                  fmt::format("no checkpoint line within {:.0f}s of the signal: the job resumes "
                              "from its last one",
                              policy.checkpoint_wait_seconds));
  }

  if (in.choice == OnHang::kCancel) {
    if (!Find(in.taken, kStepCancel)) {
      return {RecoveryAction::Kind::kCancel, std::string(kStepCancel),
              fmt::format("{}cancel the job ({})", dry, in.incident_class), "", ""};
    }
    return Record(kStepDone, "cancelled");
  }
  // Requeue, without the node that stopped first where the evidence names one.
  if (!Find(in.taken, kStepRequeue)) {
    if (in.requeues_before >= policy.max_requeues) {
      return Record(kStepRefused,
                    fmt::format("requeued {} time(s) already (max_requeues {}): an alert only",
                                in.requeues_before, policy.max_requeues));
    }
    const std::string node = in.culprit_node.value_or("");
    return {RecoveryAction::Kind::kRequeue, std::string(kStepRequeue),
            node.empty() ? fmt::format("{}requeue the job (no node named by the evidence)", dry)
                         : fmt::format("{}requeue the job without {}", dry, node),
            "", node};
  }
  if (policy.drain && in.culprit_node && !Find(in.taken, kStepDrain)) {
    return {RecoveryAction::Kind::kDrain, std::string(kStepDrain),
            fmt::format("{}drain {} ({})", dry, *in.culprit_node, in.incident_class), "",
            *in.culprit_node};
  }
  return Record(kStepDone, "requeued");
}

}  // namespace jobmon::monitor
