// The per-line recogniser (triage/line_facts.h). Each line is built from the
// format string that prints it, named beside it; the negative cases are
// lines that carry part of a wording and must not count.

#include "jobmon/triage/line_facts.h"

#include <gtest/gtest.h>

#include "jobmon/triage/signatures.h"

namespace jobmon::triage {
namespace {

// contrib/fake-trainer/src/log_lines.cc HeaderLines (the reference job
// script's header): "jax_distributed_heartbeat_timeout_seconds={:g}".
TEST(LineFacts, HeartbeatTimeout) {
  EXPECT_EQ(ParseHeartbeatTimeout("jax_distributed_heartbeat_timeout_seconds=100"), 100);
  EXPECT_EQ(ParseHeartbeatTimeout("0: jax_distributed_heartbeat_timeout_seconds=2.5"), 2.5);
  EXPECT_FALSE(ParseHeartbeatTimeout("jax_distributed_heartbeat_timeout_seconds=0"));
  EXPECT_FALSE(ParseHeartbeatTimeout("jax_distributed_heartbeat_timeout_seconds=x"));
  EXPECT_FALSE(ParseHeartbeatTimeout("heartbeat_timeout_seconds=100"));
}

// MaxText pyconfig "Config param {k}: {v}" (log_lines.cc HeaderLines).
TEST(LineFacts, CheckpointPeriod) {
  EXPECT_EQ(ParseCheckpointPeriod("Config param checkpoint_period: 200"), 200);
  EXPECT_EQ(ParseCheckpointPeriod("3: Config param checkpoint_period: 25"), 25);
  EXPECT_FALSE(ParseCheckpointPeriod("Config param checkpoint_period: 0"));
  EXPECT_FALSE(ParseCheckpointPeriod("Config param checkpoint_period: None"));
  EXPECT_FALSE(ParseCheckpointPeriod("checkpoint_period: 200"));
}

// log_lines.cc HeaderLines: "PASSTHROUGH_ARGS={}" with "steps={} ..." and
// " enable_checkpointing=true".
// The frameworks' own planned totals (sources in line_facts.cc).
TEST(LineFacts, PlannedTotal) {
  EXPECT_EQ(ParsePlannedTotal("[INFO|trainer.py:2128] >>   Total optimization steps = 1,000"),
            1000);
  EXPECT_EQ(
      ParsePlannedTotal("11/28/2026 05:03:40 - INFO - __main__ -   Total optimization steps = 375"),
      375);
  EXPECT_EQ(ParsePlannedTotal("Config param steps: 5000"), 5000);
  EXPECT_EQ(ParsePlannedTotal(" > setting training iterations to 2500"), 2500);
  EXPECT_EQ(ParsePlannedTotal("Trainer is initialized with local batch size 8, global batch size "
                              "64, gradient accumulation steps 1, sequence length 2048, total "
                              "steps 1000 (warmup 200)"),
            1000);
  EXPECT_EQ(ParsePlannedTotal("total steps: 300(30), gradient accumulation steps 1"), 300);
  // A program's own key for it, as option, config key or JSON field.
  EXPECT_EQ(ParsePlannedTotal(R"({"event": "start", "max_steps": 40})"), 40);
  EXPECT_EQ(ParsePlannedTotal("args: --max-steps 1200 --lr 3e-4"), 1200);
  EXPECT_EQ(ParsePlannedTotal("config: max_iters=5000 eval_interval=250"), 5000);
  EXPECT_EQ(ParsePlannedTotal("Namespace(lr=0.1, train_iters=300)"), 300);
  EXPECT_FALSE(ParsePlannedTotal("maxi_steps=40"));
  EXPECT_FALSE(ParsePlannedTotal("climax_steps=40")) << "max inside a word";
  EXPECT_FALSE(ParsePlannedTotal("Total optimization steps = "));
  EXPECT_FALSE(ParsePlannedTotal("Total optimization steps = ,5"));
  EXPECT_FALSE(ParsePlannedTotal("Total optimization steps = 99999999999999999999999"));
  EXPECT_FALSE(ParsePlannedTotal("Config param steps_per_eval: 10"));
}

TEST(LineFacts, PassthroughArgs) {
  auto args = ParsePassthroughArgs(
      "PASSTHROUGH_ARGS=steps=1000 per_device_batch_size=2 max_target_length=2048 "
      "enable_checkpointing=true async_checkpointing=false");
  ASSERT_TRUE(args);
  EXPECT_EQ(args->total_steps, 1000);
  EXPECT_EQ(args->checkpointing, true);
  args = ParsePassthroughArgs("PASSTHROUGH_ARGS=max_steps=5 run=x steps=30");
  ASSERT_TRUE(args);
  EXPECT_EQ(args->total_steps, 30) << "max_steps= is not steps=";
  EXPECT_FALSE(args->checkpointing.has_value());
  args = ParsePassthroughArgs("PASSTHROUGH_ARGS=steps=10 enable_checkpointing=false");
  ASSERT_TRUE(args);
  EXPECT_EQ(args->checkpointing, false);
  EXPECT_FALSE(ParsePassthroughArgs("steps=1000 enable_checkpointing=true"));
}

// The JAX coordination service (docs/signature-sources.md section 6):
// "The following tasks are unhealthy (stopped sending heartbeats):\n" then
// the task names, under absl's "E0926 17:26:32.075402  157988 file:line] ".
TEST(LineFacts, HeartbeatAccusationAndAccused) {
  EXPECT_TRUE(IsHeartbeatAccusation(
      "E0926 17:26:32.075402  157988 coordination_service.cc:1120] The following tasks are "
      "unhealthy (stopped sending heartbeats):"));
  EXPECT_FALSE(IsHeartbeatAccusation("The following tasks are unhealthy"));
  // A task name is no accusation by itself: the old "(stopped sending
  // heartbeats)" substring test was looser than the class's own wording.
  EXPECT_FALSE(IsHeartbeatAccusation("/job:jax_worker/replica:0/task:1"));
  EXPECT_EQ(ParseAccusedTasks("/job:jax_worker/replica:0/task:3"), std::vector<int>{3});
  EXPECT_EQ(
      ParseAccusedTasks("0: /job:jax_worker/replica:0/task:1 /job:jax_worker/replica:0/task:7"),
      (std::vector<int>{1, 7}));
  EXPECT_TRUE(ParseAccusedTasks("/job:other/task:3").empty());
}

// log_lines.cc: HeaderLines, TaskLines, JobSummaryLines; trainer.cc:
// "NODE_EXIT host={} exit={}", "restoring from this run's directory step {}".
TEST(LineFacts, HeaderAndSummary) {
  EXPECT_EQ(ParseHeaderJobId("SLURM_JOB_ID=4242"), "4242");
  EXPECT_EQ(ParseNnodes("NNODES=4"), 4);
  EXPECT_EQ(ParseNnodes("0: NNODES=2"), 2);
  EXPECT_FALSE(ParseNnodes("MY_NNODES=4")) << "anchored at the line start";
  EXPECT_EQ(ParseNodeList("NODE_LIST=node[001-004]"), "node[001-004]");
  EXPECT_FALSE(ParseNodeList("X NODE_LIST=node1"));
  auto host = ParseFakeTrainerTaskHost("1: [fake-trainer] task 1 on host node002 (process 1 of 4)");
  ASSERT_TRUE(host);
  EXPECT_EQ(host->task, 1);
  EXPECT_EQ(host->host, "node002");
  host = ParseJaxTaskHost("jax.distributed.initialize: process_id=3 num_processes=4 host=node004");
  ASSERT_TRUE(host);
  EXPECT_EQ(host->task, 3);
  EXPECT_EQ(host->host, "node004");
  auto exit = ParseNodeExit("NODE_EXIT host=node003 exit=137");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->host, "node003");
  EXPECT_EQ(exit->code, 137);
  EXPECT_FALSE(ParseNodeExit("NODE_EXIT host=node003"));
  EXPECT_EQ(ParseFailedStatus("Status: FAILED (exit 1)"), 1);
  EXPECT_EQ(ParseRestoreStep("0: restoring from this run's directory step 300"), 300);
  EXPECT_FALSE(ParseRestoreStep("No existing checkpoints found, not restoring checkpoint."));
}

// Slurm srun (docs/signature-sources.md): "%s: %s %s: %s%s" ->
// "srun: error: node1: task 3: Killed".
TEST(LineFacts, KilledTaskAndTaskOf) {
  EXPECT_EQ(ParseKilledTask("srun: error: node1: task 3: Killed"), 3);
  EXPECT_FALSE(ParseKilledTask("node1: task 3: Killed"));
  EXPECT_EQ(TaskOf("12: Traceback (most recent call last):"), 12);
  EXPECT_EQ(TaskOf("Polled error from coordination service (task 5)"), 5);
  EXPECT_FALSE(TaskOf("Traceback (most recent call last):"));
}

// srun's per-task end, src/srun/launch.c _task_finish: one task or a range
// ("tasks 0-3: Exited with exit code 1"); only a single task is a number.
TEST(LineFacts, TaskExit) {
  EXPECT_EQ(ParseTaskExit("srun: error: node1: task 2: Exited with exit code 1"), 2);
  EXPECT_FALSE(ParseTaskExit("srun: error: node1: tasks 0-3: Exited with exit code 1"));
  EXPECT_FALSE(ParseTaskExit("node1: task 2: Exited with exit code 1"));
}

TEST(RecogniseLine, MonitorFacts) {
  LineContext context;
  context.year = 2025;
  LineFacts facts = RecogniseLine(
      "1: E0926 17:26:32.075402  157988 coordination_service.cc:1120] The following tasks are "
      "unhealthy (stopped sending heartbeats):",
      context);
  EXPECT_TRUE(facts.heartbeat_accusation);
  ASSERT_TRUE(facts.line_time);
  EXPECT_DOUBLE_EQ(*facts.line_time, 1758907592);  // 2025-09-26T17:26:32Z
  EXPECT_FALSE(facts.step);

  facts = RecogniseLine("jax_distributed_heartbeat_timeout_seconds=100", context);
  EXPECT_EQ(facts.heartbeat_timeout, 100);
  EXPECT_FALSE(facts.heartbeat_accusation);
  facts = RecogniseLine("Config param checkpoint_period: 50", context);
  EXPECT_EQ(facts.checkpoint_period, 50);
  EXPECT_FALSE(facts.step);
  facts = RecogniseLine("PASSTHROUGH_ARGS=steps=300 enable_checkpointing=true", context);
  ASSERT_TRUE(facts.passthrough);
  EXPECT_EQ(facts.passthrough->total_steps, 300);

  // fake-trainer log_lines.cc StepLine (MaxText's "completed step: ..." format).
  const char* step_line =
      "0: completed step: 7, seconds: 1.500, TFLOP/s/device: 1.000, MFU: 1.00%, "
      "Tokens/s/device: 1.000, loss: 2.000";
  facts = RecogniseLine(step_line, context);
  ASSERT_TRUE(facts.step);
  EXPECT_EQ(facts.step->profile, StepProfile::kMaxText);
  EXPECT_EQ(facts.step->sample.step, 7);
  EXPECT_EQ(facts.step->sample.seconds, 1.5);
  context.profile = StepProfile::kMegatron;
  EXPECT_FALSE(RecogniseLine(step_line, context).step) << "a locked profile tries only its format";
}

// One list of accusation wordings (signatures.h): each is among the
// heartbeat-timeout class's signatures, with a source, and the recogniser
// calls a line with it an accusation.
TEST(LineFacts, HeartbeatAccusationsAreTheClassesWordings) {
  const FailureClass* heartbeat = FindClass("heartbeat-timeout");
  ASSERT_NE(heartbeat, nullptr);
  ASSERT_FALSE(HeartbeatAccusations().empty());
  for (const Signature& accusation : HeartbeatAccusations()) {
    EXPECT_FALSE(accusation.source.empty()) << accusation.expression;
    bool in_class = false;
    for (const Signature& s : heartbeat->patterns)
      in_class |= s.expression == accusation.expression;
    EXPECT_TRUE(in_class) << accusation.expression;
  }
  // XLA's CheckHeartbeatTimeout wording, wrapped as UNAVAILABLE under srun -l.
  EXPECT_TRUE(IsHeartbeatAccusation(
      "0: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):"));
}

}  // namespace
}  // namespace jobmon::triage

namespace jobmon::triage {
namespace {

// torch/multiprocessing/spawn.py's words for the process that failed first.
TEST(LineFacts, SpawnFailedProcess) {
  EXPECT_EQ(ParseSpawnFailedProcess("-- Process 1 terminated with the following error:"), 1);
  EXPECT_EQ(ParseSpawnFailedProcess("torch.multiprocessing.spawn.ProcessExitedException: process "
                                    "0 terminated with exit code 1"),
            0);
  EXPECT_EQ(ParseSpawnFailedProcess("ProcessExitedException: process 3 terminated with signal "
                                    "SIGSEGV"),
            3);
  EXPECT_FALSE(ParseSpawnFailedProcess("process 3 started"));
}

}  // namespace
}  // namespace jobmon::triage
