#include "jobmon/triage/signatures.h"

namespace jobmon::triage {

const char* ToString(Category category) {
  switch (category) {
    case Category::kInfrastructure:
      return "infrastructure";
    case Category::kStageTimeout:
      return "stage-timeout";
    case Category::kTraining:
      return "training";
    case Category::kJob:
      return "job";
    case Category::kDerived:
      return "derived";
  }
  return "?";
}

namespace {

// Next-step texts follow the reference's templates; where jobmon does the
// step itself, they name the jobmon command.
std::vector<FailureClass> BuildTable() {
  using C = Category;
  return {
      // Infrastructure failures (before training starts).
      {"container-pull-fail",
       C::kInfrastructure,
       "Docker pull",
       "Image pull or registry auth failed.",
       {R"(\[ERROR\] Pull failed for)", R"(\[ERROR\] Authenticated pull failed)",
        R"(\[ERROR\] Login to .* failed)"},
       false,
       {"Verify the image name in container_env.sh.", "Check registry credentials.",
        "Try a manual docker pull."}},
      {"container-load-fail",
       C::kInfrastructure,
       "Docker pull",
       "Tarball load failed.",
       {R"(\[ERROR\] Unable to determine image name or ID from docker load output)"},
       false,
       {"Check the image tarball and re-run docker load by hand."}},
      {"no-gpu",
       C::kInfrastructure,
       "Container start",
       "No GPU devices visible.",
       {R"(WARNING: No GPU devices detected)"},
       false,
       {"Check that the node has GPUs (rocm-smi or nvidia-smi).",
        "Check the container device flags in _container.sh."}},
      {"nccl-nic-fail",
       C::kInfrastructure,
       "Container start",
       "Multi-node: no suitable NIC for NCCL.",
       {R"(NCCL FATAL.*Failed to auto-detect NCCL_SOCKET_IFNAME)"},
       false,
       {"Run `ip link show` on the compute nodes to verify NIC availability.",
        "Check the choose_nccl_socket_ifname.sh logic."}},
      {"port-fail",
       C::kInfrastructure,
       "Job start",
       "Port allocation failed.",
       {R"(FATAL: Could not find a free port for JAX coordinator)",
        R"(FATAL: Could not find a free port for Ray)"},
       false,
       {"Check for stale processes holding ports on the head node.", "Resubmit the job."}},
      {"model-not-found",
       C::kInfrastructure,
       "Training start",
       "Config file missing or ambiguous model name.",
       {R"(!!! Unknown model:)", R"(!!! Model name resolution failed)"},
       false,
       {"List available configs: ls configs/*.gpu.yml.",
        "Create a new config per docs/model-configs.md."}},
      {"patch-branch-fail",
       C::kInfrastructure,
       "Container start",
       "MaxText hotfix branch checkout failed.",
       {R"(\[FAIL\] Failed to check out)"},
       false,
       {"Check that the hotfix branch exists and is reachable from the nodes."}},
      {"ray-start-fail",
       C::kInfrastructure,
       "Ray init",
       "Ray cluster bootstrap failed (training falls back to non-Ray).",
       {R"(\[Ray\] HEAD failed to start)", R"(\[Ray\] HEAD timeout)", R"(\[Ray\] WORKER failed)"},
       false,
       {"Non-critical: training falls back to non-Ray mode.", "Check port conflicts.",
        "Check the Ray logs in the job dir."}},
      // Stage timeouts.
      {"preflight-timeout",
       C::kStageTimeout,
       "Preflight",
       "Preflight checks hung (stale GPU processes, NFS, NUMA).",
       {R"(== Preflight TIMEOUT)"},
       false,
       {"Check for stuck GPU processes: rocm-smi / nvidia-smi.",
        "Increase the timeout: STAGE_TIMEOUTS=\"preflight:1800\"."}},
      {"pull-timeout",
       C::kStageTimeout,
       "Docker pull",
       "Image pull took too long (slow registry or large image).",
       {R"(== Docker pull TIMEOUT)"},
       false,
       {"Check network/registry speed.", "Pre-pull the image.",
        "Increase the timeout: STAGE_TIMEOUTS=\"pull:1800\"."}},
      {"ecc-timeout",
       C::kStageTimeout,
       "ECC check",
       "ECC memory check hung (GPU driver issue).",
       {R"(== ECC check TIMEOUT)"},
       false,
       {"Check the GPU driver state on the node (dmesg, rocm-smi / nvidia-smi).",
        "Drain the node if the ECC check keeps hanging."}},
      {"train-timeout",
       C::kStageTimeout,
       "Training",
       "Training exceeded the configured wall-clock limit.",
       {R"(== Training TIMEOUT)"},
       false,
       {"Increase the timeout: STAGE_TIMEOUTS=\"train:<seconds>\".",
        "Verify it is not a hang: check the progress projection below (`jobmon triage`)."}},
      // Training failures.
      {"heartbeat-timeout",
       C::kTraining,
       "Training",
       "JAX coordination heartbeat timeout — a known bug; the accused tasks are usually alive.",
       {R"(The following tasks are unhealthy \(stopped sending heartbeats\))",
        R"(The tasks have crashed)"},
       false,
       {"Known bug — almost certainly a false positive (see "
        "docs/jax-heartbeat-false-positive-postmortem.md); the checklist above gives the verdict.",
        "Increase jax_distributed_heartbeat_timeout_seconds to several hours (e.g. 14400).",
        "Use slurm_job_monitor for independent hang detection.",
        "Confirm with the TSDB: `jobmon diagnose <job> --playbook heartbeat`."}},
      {"oom-host",
       C::kTraining,
       "Training",
       "Host OOM: a process was killed by the Linux OOM killer.",
       {R"(Killed \(from OOM killer\))", R"(oom-kill)", R"(Out of memory)"},
       false,
       {"Reduce per_device_batch_size.", "Enable remat_policy=full.",
        "Check for a checkpoint memory spike (DP replica #0 pattern)."},
       {"oom-gpu"}},
      {"oom-gpu",
       C::kTraining,
       "Training",
       "GPU memory exhausted during compilation or execution.",
       {R"(OUT_OF_MEMORY)", R"(XLA_ERROR)", R"(ResourceExhausted)", R"(RESOURCE_EXHAUSTED)",
        R"(out of memory)"},
       false,
       {"Reduce per_device_batch_size or max_target_length.", "Try remat_policy=full.",
        "Check the XLA buffer assignment for memory usage."}},
      {"nccl-timeout",
       C::kTraining,
       "Training",
       "NCCL/RCCL collective timeout — a network or GPU issue.",
       {R"(NCCL WARN)", R"(NCCL error)", R"(Timeout waiting for)", R"(ncclSystemError)"},
       false,
       {"Check network health (ip link, ethtool, RDMA counters): "
        "`jobmon diagnose <job> --playbook network`.",
        "Run with _env_NCCL_DEBUG=INFO for detailed NCCL logs.",
        "Check whether specific nodes fail consistently."}},
      {"xla-compile-fail",
       C::kTraining,
       "Compilation",
       "XLA/GPU compiler failure.",
       {R"(INTERNAL: Failed to compile)", R"(XLA compilation failed)", R"(HloModule.*[Ee]rror)"},
       false,
       {"Check the XLA flags in train_env.sh for conflicting settings.",
        "Try _env_ENABLE_XLA_DUMP=1 to capture the failing HLO.",
        "Reduce model complexity to isolate the issue."}},
      {"python-exception",
       C::kTraining,
       "Training",
       "Unhandled Python exception.",
       {R"(Traceback \(most recent call last\):)"},
       true,
       {"Read the full traceback (quoted below).", "Check whether it is a known MaxText issue.",
        "Verify the config parameters."}},
      {"signal-kill",
       C::kTraining,
       "Training",
       "Training process killed by a signal (SIGSEGV, SIGABRT, ...).",
       {R"(Training subprocess killed by)"},
       true,
       {"Check for core dumps: <job_dir>/core*, <outputs_root>/core*, COREDUMP_EXTRA_DIRS.",
        "Inspect with gdb python3 <core_file> inside the container.", "See docs/debugging.md."}},
      {"subprocess-fail",
       C::kTraining,
       "Training",
       "Training process exited non-zero (read the preceding output).",
       {R"(Training subprocess exited with code)"},
       true,
       {"Read the output preceding the exit (evidence below)."}},
      {"actor-fail",
       C::kTraining,
       "Training",
       "Ray actor exception.",
       {R"(Actor failed:)"},
       true,
       {"Read the actor traceback (evidence below).", "Check the Ray logs in the job dir."}},
      // Job-level status.
      {"cancelled",
       C::kJob,
       "Job",
       "User or scheduler cancelled the job.",
       {R"(CANCELLED)"},
       true,
       {"Cancellation is the mechanism, not the root cause: check the progress projection — a "
        "last step far behind the expected step means a hang was cancelled.",
        "Check for preceding errors (NCCL, OOM, heartbeat). If there is no underlying issue, no "
        "action is needed."}},
      {"node-fail",
       C::kJob,
       "Job",
       "One or more nodes exited with errors.",
       {},  // from NODE_EXIT lines with a non-143 exit code, decoded by the scanner
       true,
       {"Identify which nodes failed (below) and read their task output.",
        "Exit 137: likely OOM. Exit 134/139: check core dumps."}},
      {"stage-fail",
       C::kJob,
       "Job",
       "A non-timeout stage failure (check the exit code).",
       {R"(^(\d+: )?== .* FAILED \(exit=)"},
       true,
       {"Read the stage's output before the failure line."}},
      // Derived from progress and status; no signature.
      {"hang",
       C::kDerived,
       "Training",
       "Training steps stopped advancing while the job stayed alive — almost always an NCCL/RCCL "
       "collective deadlock with every node waiting on the others.",
       {},
       false,
       {"Confirm with the TSDB at the hang time: `jobmon diagnose <job> --playbook hang` "
        "(GPU util 100% at idle power = busy-wait in a collective).",
        "Query GPU util, TCP retransmits and RDMA counters around the stall.",
        "Kill the job: scancel <id>.",
        "On resubmit: add _env_NCCL_DEBUG=INFO and let slurm_job_monitor watch it."}},
      {"unknown-death",
       C::kDerived,
       "Job",
       "The process was killed externally (SIGKILL, OOM-kill, preemption) without writing a JOB "
       "SUMMARY.",
       {},
       true,
       {"Check dmesg on the nodes for OOM kills.", "Check the Slurm state: scontrol show job <id>.",
        "If recurring: run with --diag=on for TSDB diagnostics."}},
      {"soft-success",
       C::kDerived,
       "Job",
       "The job reported a failure after training reached its final step.",
       {},
       false,
       {"Training completed; the failure happened during teardown. Check the lines after the final "
        "step."}},
      {"tgs-degradation",
       C::kDerived,
       "Training",
       "The last steps are more than 10% slower than the steady state.",
       {},
       false,
       {"Compare step time with system metrics: `jobmon diagnose <job> --playbook tgs`.",
        "Check for I/O pressure, TCP retransmits and thermal throttling."}},
  };
}

}  // namespace

const std::vector<FailureClass>& FailureClasses() {
  static const std::vector<FailureClass> table = BuildTable();
  return table;
}

const FailureClass* FindClass(std::string_view id) {
  for (const FailureClass& c : FailureClasses()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

size_t PriorityOf(std::string_view id) {
  const auto& table = FailureClasses();
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].id == id) return i;
  }
  return table.size();
}

const std::vector<std::string>& HarmlessPatterns() {
  static const std::vector<std::string> patterns = {
      R"(Failed call to cuInit: UNKNOWN ERROR \(303\))",
      R"(INTERNAL: CUDA error)",
      R"(NCCL WARN MSCCL\+\+: Feature not enabled)",
      R"(Token indices sequence length is longer than the specified maximum sequence length)",
      R"(OCI runtime exec failed)",
      R"(\[exec\] docker exec failed)",
      R"(\[cgroup\] Sent SIGKILL to 0/0 processes)",
      R"(Cannot read CPU core)",
      R"(No hardware is found\. Using default TPU version)",
      R"(No device identifiers found)",
      R"(Enabling PjRt/TPU event dependency logging)",
      R"(Fiber init: default domain = futex)",
      R"(Error response from daemon: cannot remove container)",
      R"(task \d+: Exited with exit code 143)",
      R"(srun: Terminating StepId=)",
  };
  return patterns;
}

}  // namespace jobmon::triage
