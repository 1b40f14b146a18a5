// From alert to recovery: the next step for a hang incident
// (monitor/include/jobmon/monitor/recovery.h).

#include "jobmon/monitor/recovery.h"

#include <gtest/gtest.h>

namespace jobmon::monitor {
namespace {

using Kind = RecoveryAction::Kind;

RecoveryPolicy Allowing() {
  RecoveryPolicy policy;
  policy.allowed = {OnHang::kSignal, OnHang::kRequeue, OnHang::kCancel};
  policy.grace_seconds = 60;
  policy.checkpoint_wait_seconds = 120;
  return policy;
}

RecoveryInputs Hang(OnHang choice, double now) {
  RecoveryInputs in;
  in.choice = choice;
  in.incident_class = "hang/busy-wait";
  in.alerted_at = 1000;
  in.now = now;
  in.culprit_node = "node3";
  return in;
}

// Each step as the daemon records it after it ran.
void Took(RecoveryInputs& in, const RecoveryAction& a) {
  in.taken.push_back({a.step, in.now, a.detail});
}

TEST(Recovery, NothingUnlessTheOwnerChoseItAndTheAdminsAllowIt) {
  EXPECT_EQ(NextRecoveryAction(Hang(OnHang::kNotify, 5000), Allowing()).kind, Kind::kNone);
  RecoveryPolicy none;  // the shipped default: nothing allowed
  auto refused = NextRecoveryAction(Hang(OnHang::kRequeue, 5000), none);
  EXPECT_EQ(refused.kind, Kind::kRecord);
  EXPECT_EQ(refused.step, kStepRefused);
  EXPECT_NE(refused.detail.find("allows: none"), std::string::npos) << refused.detail;
  auto slow = Hang(OnHang::kRequeue, 5000);
  slow.incident_class = "tgs-degradation";
  EXPECT_EQ(NextRecoveryAction(slow, Allowing()).step, kStepRefused);
  auto family = Hang(OnHang::kRequeue, 5000);
  family.incident_class = "hang/io-wait";
  RecoveryPolicy hangs = Allowing();
  hangs.classes = {"hang"};
  EXPECT_EQ(NextRecoveryAction(family, hangs).kind, Kind::kSignal) << "\"hang\" is every hang/*";
}

TEST(Recovery, RequeueSignalsWaitsForTheCheckpointThenRequeuesWithoutTheCulprit) {
  const RecoveryPolicy policy = Allowing();
  auto in = Hang(OnHang::kRequeue, 1030);
  EXPECT_EQ(NextRecoveryAction(in, policy).kind, Kind::kNone) << "within the grace period";
  in.now = 1060;
  in.slurm_reachable = false;
  EXPECT_EQ(NextRecoveryAction(in, policy).kind, Kind::kNone) << "never while Slurm is away";
  in.slurm_reachable = true;
  auto signal = NextRecoveryAction(in, policy);
  ASSERT_EQ(signal.kind, Kind::kSignal);
  EXPECT_EQ(signal.signal, "USR1");
  Took(in, signal);
  in.now = 1100;
  EXPECT_EQ(NextRecoveryAction(in, policy).kind, Kind::kNone) << "waiting for the checkpoint";
  in.last_checkpoint_at = 1050;  // a checkpoint before the signal is not the one asked for
  EXPECT_EQ(NextRecoveryAction(in, policy).kind, Kind::kNone);
  in.last_checkpoint_at = 1095;
  auto checkpoint = NextRecoveryAction(in, policy);
  ASSERT_EQ(checkpoint.step, kStepCheckpoint);
  Took(in, checkpoint);
  auto requeue = NextRecoveryAction(in, policy);
  ASSERT_EQ(requeue.kind, Kind::kRequeue);
  EXPECT_EQ(requeue.node, "node3");
  EXPECT_EQ(requeue.detail, "requeue the job without node3");
  Took(in, requeue);
  auto done = NextRecoveryAction(in, policy);
  EXPECT_EQ(done.step, kStepDone);
  Took(in, done);
  EXPECT_TRUE(RecoveryFinished(in.taken));
  EXPECT_EQ(NextRecoveryAction(in, policy).kind, Kind::kNone) << "never twice";
}

TEST(Recovery, NoCheckpointLineWithinTheWaitStillRequeuesAndDrainsWhenAllowed) {
  RecoveryPolicy policy = Allowing();
  policy.drain = true;
  auto in = Hang(OnHang::kRequeue, 1060);
  Took(in, NextRecoveryAction(in, policy));
  in.now = 1060 + 119;
  EXPECT_EQ(NextRecoveryAction(in, policy).kind, Kind::kNone);
  in.now = 1060 + 120;
  auto timeout = NextRecoveryAction(in, policy);
  EXPECT_EQ(timeout.step, kStepCheckpointTimeout);
  Took(in, timeout);
  Took(in, NextRecoveryAction(in, policy));
  auto drain = NextRecoveryAction(in, policy);
  ASSERT_EQ(drain.kind, Kind::kDrain);
  EXPECT_EQ(drain.node, "node3");
}

TEST(Recovery, AHoldStopsItAndMaxRequeuesEndsInAnAlertOnly) {
  const RecoveryPolicy policy = Allowing();
  auto held = Hang(OnHang::kRequeue, 1060);
  held.held = true;
  EXPECT_EQ(NextRecoveryAction(held, policy).step, kStepHeld);
  auto again = Hang(OnHang::kRequeue, 1060);
  again.requeues_before = policy.max_requeues;
  Took(again, NextRecoveryAction(again, policy));
  again.now = 2000;
  Took(again, NextRecoveryAction(again, policy));  // checkpoint timeout
  auto refused = NextRecoveryAction(again, policy);
  EXPECT_EQ(refused.step, kStepRefused);
  EXPECT_NE(refused.detail.find("max_requeues 2"), std::string::npos) << refused.detail;
}

TEST(Recovery, CancelAndSignalOnlyAndTheDryRunSaysWhatItWouldDo) {
  RecoveryPolicy policy = Allowing();
  auto cancel = Hang(OnHang::kCancel, 1060);
  Took(cancel, NextRecoveryAction(cancel, policy));
  cancel.now = 5000;
  Took(cancel, NextRecoveryAction(cancel, policy));
  EXPECT_EQ(NextRecoveryAction(cancel, policy).kind, Kind::kCancel);
  auto signal = Hang(OnHang::kSignal, 1060);
  Took(signal, NextRecoveryAction(signal, policy));
  EXPECT_EQ(NextRecoveryAction(signal, policy).step, kStepDone);
  policy.dry_run = true;
  auto dry = NextRecoveryAction(Hang(OnHang::kRequeue, 1060), policy);
  EXPECT_EQ(dry.detail.rfind("dry run: would send SIGUSR1", 0), 0u) << dry.detail;
}

}  // namespace
}  // namespace jobmon::monitor
