// Failure and completion lines of the training frameworks (Megatron-LM,
// NeMo, DeepSpeed, Lightning, HF Trainer / accelerate, PyTorch), each built
// from the format string named beside it (triage/src/signatures.cc and
// line_facts.cc name the file and version range), through the scanner:
// the class, the weight it carries in a cascade, and what Analyze makes of
// the log, negatives included.
#include <gtest/gtest.h>

#include <string>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"

namespace jobmon::triage {
namespace {

class FrameworkSignaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto scanner = LogScanner::Create({});
    ASSERT_TRUE(scanner.ok()) << scanner.error().message;
    scanner_ = std::move(scanner.value());
  }
  ScanFacts Scan(std::string_view text) {
    auto facts = scanner_->ScanText(text);
    EXPECT_TRUE(facts.ok());
    return facts.ok() ? std::move(facts.value()) : ScanFacts{};
  }
  static TriageReport Report(const ScanFacts& facts) {
    AnalysisContext context;
    context.now = 1795168800;
    return Analyze(facts, context);
  }
  enum class As { kRoot, kConsequence };
  // `line` alone is `id`, with the given weight.
  void ExpectClass(const std::string& line, const std::string& id, As as) {
    ScanFacts facts = Scan(line + "\n");
    ASSERT_TRUE(facts.classes.count(id)) << line;
    const ClassHits& hits = facts.classes.at(id);
    if (as == As::kRoot) {
      EXPECT_EQ(hits.first_root, 1u) << line;
    } else {
      EXPECT_EQ(hits.first_consequence, 1u) << line;
      EXPECT_FALSE(hits.first_root) << line;
      EXPECT_FALSE(hits.first_generic) << line;
    }
  }
  std::unique_ptr<LogScanner> scanner_;
};

TEST_F(FrameworkSignaturesTest, DivergedTrainingStopsAreRoots) {
  // Megatron-LM rerun_state_machine.py full_message (fatal, rerun disabled)
  // around param_and_grad_buffer.py check_grads' message.
  ExpectClass(
      "RuntimeError: Rank 1, node gpu-2, device 1, iteration 120: Unexpected result nan "
      "(message='found NaN in local grad norm for bucket #0 in backward pass before "
      "data-parallel communication collective')",
      "python-exception", As::kRoot);
  // Megatron-LM e39f9f6 pretrain_gpt.py loss_func assert.
  ExpectClass(
      "AssertionError: Rank 1: found NaN in local forward loss calculation. Device: 1, node: gpu-2",
      "python-exception", As::kRoot);
  // DeepSpeed loss_scaler.py update_scale raise Exception(...).
  ExpectClass(
      "Exception: Current loss scale already at minimum - cannot decrease scale anymore. "
      "Exiting run.",
      "python-exception", As::kRoot);
}

TEST_F(FrameworkSignaturesTest, AMegatronNanIsTheRootOfItsPeersNcclErrors) {
  // Rank 1 stops on a NaN; rank 0's NCCL watchdog then times out and the
  // launcher summarises: the NaN is primary, the NCCL error a finding.
  ScanFacts facts = Scan(
      "[rank1]: AssertionError: Rank 1: found NaN in local grad norm in backwards pass. Device: "
      "1, node: gpu-2\n"
      "[rank0]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, NumelIn=1, "
      "NumelOut=1, Timeout(ms)=600000) ran for 600017 milliseconds before timing out.\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n");
  TriageReport report = Report(facts);
  EXPECT_EQ(report.primary, "python-exception");
  EXPECT_TRUE(facts.classes.count("nccl-timeout"));
}

TEST_F(FrameworkSignaturesTest, LaunchersAndSignalHandlers) {
  // DeepSpeed launch.py sigkill_handler through deepspeed/utils/logging.py's
  // "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s".
  ExpectClass(
      "[2025-02-21 12:00:00,000] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4242",
      "subprocess-fail", As::kConsequence);
  ExpectClass(
      "[2025-02-21 12:00:00,000] [INFO] [launch.py:328:sigkill_handler] Main process received "
      "SIGTERM, exiting",
      "cancelled", As::kConsequence);
  // Megatron-LM training.py print_datetime: f'[{string}] datetime: {time_str} '.
  ExpectClass("[exiting program after receiving SIGTERM.] datetime: 2025-01-01 12:00:00.123456 ",
              "cancelled", As::kConsequence);
  // Lightning signal_connector.py.
  ExpectClass("Handling auto-requeue signal: 10", "cancelled", As::kConsequence);
  ExpectClass("Requeued SLURM job: 4242", "cancelled", As::kConsequence);
  ExpectClass("Received SIGTERM: 15", "cancelled", As::kConsequence);
  // CPython's exception line of Lightning's SIGTERMException (utilities/exceptions.py).
  ExpectClass("lightning.pytorch.utilities.exceptions.SIGTERMException", "cancelled",
              As::kConsequence);
  // NeMo preemption callbacks (logging.info).
  ExpectClass(
      "[NeMo I 2025-01-01 12:00:00 preemption:94] Received SIGTERM, saving checkpoint and "
      "exiting",
      "cancelled", As::kConsequence);
  ExpectClass("Preemption detected, saving checkpoint and exiting", "cancelled", As::kConsequence);
}

TEST_F(FrameworkSignaturesTest, ASigtermTracebackUnderLightningIsNoPythonException) {
  // The traceback of a cancel: its exception line is Lightning's
  // SIGTERMException, so the traceback weighs as a consequence.
  ScanFacts facts = Scan(
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 10, in <module>\n"
      "lightning.pytorch.utilities.exceptions.SIGTERMException\n");
  ASSERT_TRUE(facts.classes.count("python-exception"));
  EXPECT_FALSE(facts.classes.at("python-exception").first_generic);
  EXPECT_NE(Report(facts).primary, "python-exception");
}

TEST_F(FrameworkSignaturesTest, OutOfMemoryWordings) {
  // accelerate utils/memory.py find_executable_batch_size.
  ExpectClass("RuntimeError: No executable batch size found, reached zero.", "oom-gpu", As::kRoot);
  // c10 alloc_cpu.cpp (text in Debian torch 1.13.1's libc10.so).
  ExpectClass(
      "RuntimeError: [enforce fail at alloc_cpu.cpp:75] data. DefaultCPUAllocator: can't "
      "allocate memory: you tried to allocate 68719476736 bytes. Error code 12 (Cannot "
      "allocate memory)",
      "oom-host", As::kRoot);
  // ProcessGroupNCCL.cpp watchdog, 2.5+ era: logPrefix() then the message.
  ExpectClass(
      "[rank0]:[E710 18:00:32.426302794 ProcessGroupNCCL.cpp:2395] [PG ID 0 PG GUID "
      "0(default_pg) Rank 0]  failure detected by watchdog at work sequence id: 59958 PG status: "
      "last enqueued work: 59998, last completed work: 59957",
      "nccl-timeout", As::kRoot);
}

TEST_F(FrameworkSignaturesTest, DeepSpeedOverflowSkipsAreNotFailures) {
  // loss_scaler.py update_scale (logger.info) and fused_optimizer.py step (log_dist).
  ScanFacts facts = Scan(
      "[2025-02-21 12:00:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
      "Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n"
      "[2025-02-21 12:00:01,000] [INFO] [logging.py:128:log_dist] [Rank 0] Overflow detected. "
      "Skipping step. Attempted loss scale: 32768, reducing to 16384\n");
  EXPECT_TRUE(facts.classes.empty());
  EXPECT_EQ(facts.harmless_lines, 2u);
}

TEST_F(FrameworkSignaturesTest, FrameworkCompletionLinesMakeTheRunCompleted) {
  for (const char* line : {
           // Lightning fit_loop.py done (rank_zero_info): not a failure.
           "`Trainer.fit` stopped: `max_steps=200` reached.",
           // HF Trainer _inner_training_loop logger.info("\n\nTraining completed. ...\n\n").
           "Training completed. Do not forget to share your model on huggingface.co/models =)",
           // Megatron-LM training.py print_datetime.
           "[after training is done] datetime: 2025-01-01 12:00:00.123456 ",
           "[exiting program after 239.99166 minutes] datetime: 2025-01-01 12:00:00.123456 ",
           "[exiting program at iteration 5000] datetime: 2025-01-01 12:00:00.123456 ",
       }) {
    ScanFacts facts =
        Scan(std::string("step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\n") + line + "\n");
    EXPECT_TRUE(facts.classes.empty()) << line;
    ASSERT_TRUE(facts.completion) << line;
    EXPECT_EQ(facts.completion->line, 4u) << line;
    EXPECT_EQ(Report(facts).status, JobStatus::kCompleted) << line;
  }
  // Not a planned end: SIGTERM's exit is not a completion.
  ScanFacts sigterm =
      Scan("[exiting program after receiving SIGTERM.] datetime: 2025-01-01 12:00:00.1 \n");
  EXPECT_FALSE(sigterm.completion);
}

}  // namespace
}  // namespace jobmon::triage
