// Failure and completion lines of the training frameworks (Megatron-LM,
// NeMo, DeepSpeed, Lightning, HF Trainer / accelerate, PyTorch), each built
// from the format string named beside it (triage/src/signatures.cc and
// line_facts.cc name the file and version range), through the scanner:
// the class, the weight it carries in a cascade, and what Analyze makes of
// the log, negatives included.
#include <gtest/gtest.h>

#include <string>

#include "jobmon/common/valid_utf8.h"
#include "jobmon/triage/line_facts.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"
#include "shared_scanner.h"

namespace jobmon::triage {
namespace {

class FrameworkSignaturesTest : public ::testing::Test {
 protected:
  void SetUp() override { scanner_ = &SharedScanner(); }
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
  const LogScanner* scanner_ = nullptr;
};

// An exception raised inside a loader is a load failure, whatever it says
// (line_facts.cc, the loader frames); a save's, an interruption's or one
// raised after the loader returned is not.
TEST_F(FrameworkSignaturesTest, AnExceptionRaisedInsideALoaderIsALoadFailure) {
  auto traceback = [](const std::string& frame, const std::string& exception) {
    return "Traceback (most recent call last):\n"
           "  File \"/job/train.py\", line 225, in train\n"
           "    state = torch.load(args.resume)\n" +
           frame + "\n    return f(x)\n" + exception + "\n";
  };
  const std::string load =
      "  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 777, in load";
  const std::string save =
      "  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 423, in save";
  const std::string safetensors =
      "  File \"/venv/lib/python3.11/site-packages/safetensors/torch.py\", line 313, in load_file";
  EXPECT_EQ(Report(Scan(traceback(load, "OSError: [Errno 22] Invalid argument"))).primary,
            "model-not-found");
  EXPECT_EQ(Report(Scan(traceback(load, "EOFError: Ran out of input"))).primary, "model-not-found");
  EXPECT_EQ(
      Report(Scan(traceback(safetensors, "OSError: No such file or directory: 'x.bin'"))).primary,
      "model-not-found");
  EXPECT_EQ(Report(Scan(traceback(save, "RuntimeError: file write failed"))).primary,
            "python-exception");
  EXPECT_EQ(Report(Scan(traceback(load, "KeyboardInterrupt"))).primary, "cancelled")
      << "an interrupt while loading is no load failure";
  // The loader's frame belongs to an earlier traceback: the later one is no load failure.
  ScanFacts two = Scan(traceback(load, "OSError: x") + "step 1 loss 1.0\n" +
                       "Traceback (most recent call last):\n  File \"/job/train.py\", line 9, "
                       "in f\nValueError: bad batch\n");
  ASSERT_TRUE(two.classes.count("model-not-found"));
  EXPECT_EQ(two.classes.at("model-not-found").count, 1u);
  EXPECT_TRUE(two.classes.at("python-exception").first_generic);
}

// The handler's line is quoted in the basis cut short; a character the cut
// splits becomes U+FFFD, never a stray byte.
TEST_F(FrameworkSignaturesTest, ATimeLimitStopQuotesItsLineAsValidText) {
  std::string log;
  for (int step = 1; step <= 10; ++step)
    log += "epoch 1/1 step " + std::to_string(step) + "/100 loss 0.5\n";
  log += "received SIGUSR1 at step 9:";  // 27 bytes: byte 120 falls inside a character
  for (int i = 0; i < 80; ++i) log += "\xc3\xa9";
  log += "\n";
  TriageReport r = Report(Scan(log));
  EXPECT_EQ(r.primary, "train-timeout");
  EXPECT_NE(r.status_basis.find("received SIGUSR1"), std::string::npos) << r.status_basis;
  EXPECT_EQ(r.status_basis, ValidUtf8(r.status_basis));
}

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

TEST_F(FrameworkSignaturesTest, RocmBuildsSayHipWhereCudaBuildsSayCuda) {
  // PyTorch hipifies c10/cuda/* for ROCm, literals included ("CUDA" -> "HIP",
  // cudaGetErrorString -> hipGetErrorString): c10_cuda_check_implementation's
  // "CUDA error: " + text becomes "HIP error: " + text. ROCm >= 5.3's
  // ihipGetErrorString returns CUDA's texts, earlier ones the enum's name.
  for (const char* line : {"RuntimeError: HIP error: unspecified launch failure",
                           "RuntimeError: HIP error: an illegal memory access was encountered",
                           "RuntimeError: HIP error: hipErrorIllegalAddress",
                           "RuntimeError: HIP error: uncorrectable ECC error encountered"}) {
    ScanFacts facts = Scan(std::string(line) + "\n");
    EXPECT_TRUE(facts.classes.count("python-exception")) << line;
    EXPECT_FALSE(facts.classes.count("oom-gpu")) << line;
  }
  for (const char* line :
       {"RuntimeError: HIP error: out of memory", "RuntimeError: HIP error: hipErrorOutOfMemory",
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB"}) {
    ScanFacts facts = Scan(std::string(line) + "\n");
    EXPECT_TRUE(facts.classes.count("oom-gpu")) << line;
  }
  // An unrelated HIP status is no GPU fault.
  EXPECT_TRUE(Scan("HIP error: hipErrorNotReady ignored while polling\n").classes.empty());
}

TEST_F(FrameworkSignaturesTest, PyTorchCudaOutOfMemoryWordingsAcrossVersions) {
  // c10/cuda/CUDACachingAllocator.cpp TORCH_CHECK_WITH(OutOfMemoryError, ...),
  // 1.x form: "CUDA out of memory. Tried to allocate ", size, " (GPU ", device,
  // "; ", total, " total capacity; ", allocated, " already allocated; ", free,
  // " free; ", allowed_info, reserved, " reserved in total by PyTorch)", hint;
  // type name from torch/csrc/Exceptions.cpp "torch.cuda.OutOfMemoryError".
  ExpectClass(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
      "79.15 GiB total capacity; 78.10 GiB already allocated; 5.62 MiB free; 78.50 GiB reserved "
      "in total by PyTorch) If reserved memory is >> allocated memory try setting "
      "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
      "PYTORCH_CUDA_ALLOC_CONF",
      "oom-gpu", As::kRoot);
  // HEAD form: ". GPU ", device, " has a total capacity of ", total, " of which ",
  // free, " is free. ", proc_info, "Of the allocated memory ", allocated,
  // " is allocated by PyTorch, and ", reserved, " is reserved by PyTorch but
  // unallocated.", expandable_segments hint; later type name torch.OutOfMemoryError;
  // torchrun's [rankN]: tee label.
  ExpectClass(
      "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 "
      "has a total capacity of 79.19 GiB of which 1.06 GiB is free. Of the allocated memory "
      "76.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated. "
      "If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
      "documentation for Memory Management  "
      "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      "oom-gpu", As::kRoot);
  // The type name alone (a traceback's last line cut before its message).
  ExpectClass("torch.OutOfMemoryError", "oom-gpu", As::kRoot);
  // Not an OOM: another torch exception type.
  ScanFacts other = Scan("torch.distributed.DistBackendError: NCCL error\n");
  EXPECT_FALSE(other.classes.count("oom-gpu"));
}

TEST_F(FrameworkSignaturesTest, ProcessGroupNcclWatchdogWordingsWithLogPrefix) {
  // ProcessGroupNCCL::createLogPrefix(): "[PG ID ", local_id_, " PG GUID ",
  // pg_uid_, "(", pg_desc_, ") Rank ", rank_, "] " (no "(desc)" when undefined).
  const std::string prefix = "[PG ID 1 PG GUID 3(dp_replicate) Rank 5] ";
  // WorkNCCL::checkTimeout: logPrefix(), "Watchdog caught collective operation
  // timeout: ", *this, " ran for ", ms, " milliseconds before timing out." with
  // operator<<(WorkNCCL): "WorkNCCL(SeqNum=", seq, ", OpType=", op, ", NumelIn=",
  // in, ", NumelOut=", out, ", Timeout(ms)=", timeout, ")".
  ExpectClass(prefix +
                  "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, "
                  "OpType=_ALLGATHER_BASE, NumelIn=4096, NumelOut=32768, Timeout(ms)=600000) "
                  "ran for 600104 milliseconds before timing out.",
              "nccl-timeout", As::kRoot);
  // Watchdog loop: logPrefix(), "Exception (either an error or timeout) detected
  // by watchdog at work: ", seq, ", last enqueued NCCL work: ", n, ", last
  // completed NCCL work: ", m, ".".
  ExpectClass(prefix +
                  "Exception (either an error or timeout) detected by watchdog at work: 42, last "
                  "enqueued NCCL work: 43, last completed NCCL work: 41.",
              "nccl-timeout", As::kRoot);
  // WorkNCCL::handleException: LOG(ERROR) << logPrefix() << "Some NCCL operations
  // have failed or timed out. Due to the asynchronous nature of CUDA kernels,
  // subsequent GPU operations might run on corrupted/incomplete data."
  ExpectClass(prefix +
                  "Some NCCL operations have failed or timed out. Due to the asynchronous "
                  "nature of CUDA kernels, subsequent GPU operations might run on "
                  "corrupted/incomplete data.",
              "nccl-timeout", As::kConsequence);
}

TEST_F(FrameworkSignaturesTest, XlaOutOfMemoryIsAGpuOomNotAHostOne) {
  // tensorflow/stream_executor/tf_allocator_adapter.cc ResourceExhausted("Out of
  // memory while trying to allocate ", size, " bytes.") as jaxlib raises it.
  ScanFacts device = Scan(
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
      "allocate 17179869184 bytes.\n");
  ASSERT_TRUE(device.classes.count("oom-gpu"));
  EXPECT_EQ(device.classes.at("oom-gpu").first_root, 1u);
  EXPECT_FALSE(device.classes.count("oom-host"));
  // openxla/xla tf_allocator_adapter.cc MemoryAllocationError, pinned host
  // pool: "Out of ", "host ", "memory while trying to allocate ", size,
  // " bytes.", kHostMemoryExplanation. Matched without the status name too.
  ScanFacts host = Scan(
      "Out of host memory while trying to allocate 1073741824 bytes. Please set the environment "
      "variable XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host memory than the "
      "default 64 GB.\n");
  ASSERT_TRUE(host.classes.count("oom-gpu"));
  EXPECT_EQ(host.classes.at("oom-gpu").first_root, 1u);
}

TEST_F(FrameworkSignaturesTest, CoordinationServiceWordingsOfTslAndXla) {
  // google/tsl coordination_service.cc (2023-06..2024-04, jax <= 0.4.26):
  // LOG(ERROR) << "Stopping coordination service as the following tasks are "
  // "unhealthy (stopped sending heartbeats):\n" << tasks joined by "\n" << ...
  const std::string tsl_stop =
      "E0101 12:00:00.000000  4242 coordination_service.cc:428] Stopping coordination service "
      "as the following tasks are unhealthy (stopped sending heartbeats):";
  ExpectClass(tsl_stop, "heartbeat-timeout", As::kRoot);
  EXPECT_TRUE(IsHeartbeatAccusation(tsl_stop));
  // xla coordination_service.cc CheckHeartbeatTimeout UNAVAILABLE status.
  EXPECT_TRUE(IsHeartbeatAccusation(
      "UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):"));
  // tsl "Task ", task_name, " heartbeat timeout. This indicates that the remote
  // task has failed, got preempted, or crashed unexpectedly. Check the task logs
  // for an earlier error to debug further." (UNAVAILABLE, per task).
  ExpectClass(
      "UNAVAILABLE: Task /job:jax_worker/replica:0/task:3 heartbeat timeout. This indicates "
      "that the remote task has failed, got preempted, or crashed unexpectedly. Check the task "
      "logs for an earlier error to debug further.",
      "heartbeat-timeout", As::kRoot);
  // tsl TaskState::RecordHeartbeat: "Incarnation ID mismatch: expecting ", a,
  // " but got ", b, ". This means the remote task has restarted." (ABORTED).
  ExpectClass(
      "ABORTED: Incarnation ID mismatch: expecting 8023541 but got 1192. This means the remote "
      "task has restarted.",
      "node-fail", As::kRoot);
  // xla: task_id, " Heartbeat: Incarnation ID mismatch: expecting ", a, " but got ", b, ...
  ExpectClass(
      "ABORTED: 3 Heartbeat: Incarnation ID mismatch: expecting 8023541 but got 1192. The task "
      "has restarted and likely crashed earlier - check for any earlier errors or any scheduler "
      "events (e.g. preemption, eviction) to debug further.",
      "node-fail", As::kRoot);
  // The agent's own coordinator restart ("Leader incarnation ID mismatch") is
  // another wording, and no task restart.
  ScanFacts leader = Scan("ABORTED: Leader incarnation ID mismatch: the coordination leader\n");
  EXPECT_FALSE(leader.classes.count("node-fail"));
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

// NCCL's own words for an interface it cannot use (src/bootstrap.cc,
// src/transport/net_socket.cc, net_ib.cc WARN bodies behind NCCL's line
// header, src/debug.cc), and gloo's (gloo/transport/tcp/device.cc, through
// GLOO_ENFORCE as PyTorch raises it): one family, nccl-nic-fail, not the
// generic NCCL error or python-exception they read as before.
TEST_F(FrameworkSignaturesTest, NoUsableNetworkInterfaceIsOneFamily) {
  for (const char* line : {
           "node1:1234:1234 [0] NCCL INFO Bootstrap : no socket interface found",
           "node1:1234:1234 [0] misc/socket.cc:456 NCCL WARN Bootstrap : no socket interface found",
           "node1:1234:1234 [0] NCCL WARN NET/Socket : no interface found",
           "node1:1234:1234 [0] NCCL WARN NET/Socket : No usable listening interface found",
           "node1:1234:1234 [0] NCCL WARN NET/IB : No IP interface found.",
           "RuntimeError: [enforce fail at ./gloo/transport/tcp/device.cc:80] ifa != nullptr. "
           "Unable to find address for: ib9",
           "RuntimeError: [enforce fail at gloo/transport/tcp/device.cc:212] Unable to find "
           "interface for: [10.0.0.5]:0",
       }) {
    ExpectClass(line, "nccl-nic-fail", As::kRoot);
  }
}

// A batch script's shell on its foreground command killed by a signal
// (bash jobs.c: "%s: line %d: ", the pid, glibc's strsignal text padded to
// 24 columns, 27 from bash 5.3, "(core dumped) ", the command): signal-kill
// as a consequence, so a cause the log gives earlier stays the primary.
TEST_F(FrameworkSignaturesTest, TheShellsWordForASignalDeathIsItsMechanism) {
  for (const char* line : {
           "/var/spool/slurmd/job00042/slurm_script: line 17:  4242 Killed                  "
           "python train.py",
           "train.sh: line 9:  4242 Segmentation fault      (core dumped) python train.py",
           "job.sh: line 3:  2959 CPU time limit exceeded python train.py",
           "job.sh: line 3: 12959 File size limit exceeded (core dumped) python train.py",
           "job.sh: line 3:  2959 Bus error                  python train.py",  // bash 5.3
       }) {
    ExpectClass(line, "signal-kill", As::kConsequence);
  }
  // Not a job-status line: a line of the program's own that says "Killed".
  ScanFacts facts = Scan("worker: line 3 of the config: 12 Killed processes restarted\n");
  EXPECT_FALSE(facts.classes.count("signal-kill"));
}

// A model that cannot be loaded, as transformers (utils/hub.py,
// modeling_utils.py), huggingface_hub (utils/_http.py, file_download.py)
// and torch.load (inline_container.cc) word it: one class.
TEST_F(FrameworkSignaturesTest, AModelThatCannotBeLoadedIsOneFamily) {
  for (const char* line : {
           "OSError: meta-llama/Llama-9-70b is not a local folder and is not a valid model "
           "identifier listed on 'https://huggingface.co/models'",
           "OSError: /models/llama does not appear to have a file named config.json. Checkout "
           "'https://huggingface.co//models/llama/tree/None' for available files.",
           "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and "
           "couldn't find them in the cached files.",
           "OSError: v2 is not a valid git identifier (branch name, tag name or commit id) that "
           "exists for this model name.",
           "OSError: You are trying to access a gated repo.",
           "OSError: Error no file named pytorch_model.bin, model.safetensors found in directory "
           "/models/llama.",
           "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: x) "
           "Repository Not Found for url: https://huggingface.co/api/models/x/y.",
           "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in "
           "the disk cache and outgoing traffic has been disabled.",
           "huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach "
           "https://huggingface.co/api/models/x: offline mode is enabled.",
           "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central "
           "directory",
       }) {
    ExpectClass(line, "model-not-found", As::kRoot);
  }
  // Writing a checkpoint that fails is not loading one.
  ScanFacts facts = Scan(
      "RuntimeError: [enforce fail at inline_container.cc:445] . PytorchStreamWriter failed "
      "writing file data/0: file write failed\n");
  EXPECT_FALSE(facts.classes.count("model-not-found"));
}

// A compiler's failure, whichever component words it (ptxas/nvcc as the
// CUDA toolkit prints them, XLA's wrappers, Triton, Inductor, a C++/CUDA
// extension build, Mosaic): one class, and never a GPU OOM though XLA
// reports a register allocation failure as RESOURCE_EXHAUSTED.
TEST_F(FrameworkSignaturesTest, ACompilersFailureIsOneFamily) {
  for (const char* line : {
           "ptxas fatal   : Value 'sm_103a' is not defined for option 'gpu-name'",
           "ptxas /tmp/tmpx.ptx, line 10; error   : Entry function 'k' uses too much shared data",
           "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
           "1 error detected in the compilation of \"fused_adam.cu\".",
           "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: ptxas exited with non-zero error code "
           "65280, output: ",
           "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error",
           "triton.compiler.errors.CompilationError: at 12:4:",
           "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: "
           "131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
           "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
           "torch._inductor.exc.InductorError: CompilationError: at 3:8:",
           "RuntimeError: Error building extension 'fused_adam': [1/3] nvcc -c ...",
           "jax._src.pallas.mosaic.error_handling.MosaicError: INTERNAL: Mosaic failed to compile",
       }) {
    ExpectClass(line, "compile-fail", As::kRoot);
  }
  ScanFacts facts = Scan(
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: ptxas fatal   : Register "
      "allocation failed with register count of 255\n");
  EXPECT_TRUE(facts.classes.count("compile-fail"));
  EXPECT_FALSE(facts.classes.count("oom-gpu")) << "a compiler's resource, not GPU memory";
}

}  // namespace
}  // namespace jobmon::triage
