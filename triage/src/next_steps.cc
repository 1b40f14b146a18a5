#include "next_steps.h"

#include <fmt/format.h>

namespace jobmon::triage {

namespace {

// Whatever the framework: the catalogue's steps without the reference
// pipeline's knobs (MaxText's config keys, its container scripts).
std::vector<std::string> NeutralSteps(std::string_view class_id) {
  if (class_id == "python-exception")
    return {
        "Read the full traceback (quoted below): its last frame in the job's own code is "
        "where to start.",
        "Verify the script's arguments and configuration (the values that frame uses)."};
  if (class_id == "oom-host")
    return {
        "Lower the memory each process needs (batch size, data loader workers and their "
        "prefetching), or ask Slurm for more (`--mem`, `--mem-per-cpu`) or fewer tasks per "
        "node.",
        "The kernel's report (`dmesg` on the node) names the process it killed and the "
        "memory limit it hit."};
  if (class_id == "oom-gpu")
    return {
        "Reduce the batch size or sequence length, or trade compute for memory (activation "
        "checkpointing, mixed precision).",
        "Compare the memory the message says is in use with the device's total: another "
        "process on the GPU, or fragmentation, leaves less than expected."};
  if (class_id == "signal-kill")
    return {
        "SIGKILL (`Killed`, exit 137) with no error of its own is most often the kernel's "
        "OOM killer: check `dmesg` on the node, or `sacct -j <job> -o JobID,State,MaxRSS`.",
        "SIGSEGV or SIGABRT: rerun with Python's faulthandler on (`python -X faulthandler`, "
        "PYTHONFAULTHANDLER=1) for the stack; look for core dumps (`coredumpctl`, core* in "
        "the working directory)."};
  if (class_id == "train-timeout")
    return {"Resubmit to resume from the last checkpoint, or ask for more time (`--time`).",
            "Verify it is not a hang: check the progress projection below."};
  return {};
}

// PyTorch's own tools for the classes where they differ from the neutral steps.
std::vector<std::string> TorchSteps(std::string_view class_id, RuntimeSet runtimes) {
  if (class_id == "python-exception") {
    std::vector<std::string> steps = NeutralSteps(class_id);
    if (Has(runtimes, Runtime::kTorchSpawn))
      steps.push_back(
          "torch.multiprocessing.spawn re-raises the first failing rank's exception: read the "
          "traceback after `-- Process N terminated with the following error:`.");
    if (Has(runtimes, Runtime::kTorchrun))
      steps.push_back(
          "torchrun's summary names every failed rank; decorate the entry point with `@record` "
          "(torch.distributed.elastic.multiprocessing.errors) to get each worker's traceback in "
          "it.");
    return steps;
  }
  if (class_id == "oom-host")
    return {
        "Lower the memory each process needs: the batch size, DataLoader num_workers and "
        "prefetch_factor (each worker is a process with its own copy of the Dataset), "
        "batches kept alive across steps.",
        "Ask Slurm for more memory (`--mem`, `--mem-per-cpu`) or fewer tasks per node; the "
        "kernel's report (`dmesg` on the node) names the process it killed."};
  if (class_id == "oom-gpu")
    return {
        "Reduce the batch size, or trade compute for memory: activation checkpointing "
        "(torch.utils.checkpoint), mixed precision (torch.autocast).",
        "Reserved far above allocated in the message is fragmentation: "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (torch >= 2.1) or "
        "max_split_size_mb."};
  if (class_id == "nccl-timeout")
    return {
        "Find the rank that did not reach the collective: the one that failed or stopped "
        "first (the ranks below); the others' timeouts follow from it.",
        "On resubmit: NCCL_DEBUG=INFO, and TORCH_DISTRIBUTED_DEBUG=DETAIL (it checks that "
        "every rank calls the same collective with the same shapes).",
        "Check network health: `jobmon diagnose <job> --playbook network`."};
  if (class_id == "hang")
    return {
        "Before ending it, dump the stuck ranks' stacks: `py-spy dump --pid <pid>` on each "
        "node, or faulthandler.register(signal.SIGUSR1) in the script and `scancel "
        "--signal=USR1 <job>`.",
        "Confirm with the TSDB at the hang time: `jobmon diagnose <job> --playbook hang`.",
        "On resubmit: a process-group timeout (init_process_group's `timeout`) turns a hang "
        "into an error that names the collective; NCCL_DEBUG=INFO."};
  return NeutralSteps(class_id);
}

// Ray's own tools, for the classes its failures fall in (docs/ray.md).
std::vector<std::string> RaySteps(std::string_view class_id) {
  if (class_id == "ray-start-fail")
    return {
        "The driver could not reach Ray's head (GCS): check that `ray start --head` ran and "
        "succeeded on the head node (its gcs_server.out and raylet.out in the session's logs "
        "directory) and that this node reaches that address and port.",
        "A port already in use on the head: start it with another `--port`."};
  if (class_id == "actor-fail")
    return {
        "Read the actor's exit cause in the ActorDiedError (`Worker exit type`, `Worker exit "
        "detail`) and the dead worker's own log: `ray logs worker-<id>*`, or the session's "
        "logs/worker-*.out and .err.",
        "SYSTEM_ERROR with no error of its own: a SIGKILL (the kernel's OOM killer: dmesg on "
        "its node) or a native crash."};
  if (class_id == "oom-host")
    return {
        "Ray's memory monitor or the object store ran out of host memory: lower the memory "
        "each worker needs, request more CPUs or memory per task/actor to run fewer per node, "
        "or give the object store more (`ray start --object-store-memory`).",
        "The kill threshold is RAY_memory_usage_threshold (0.95 by default), set when Ray "
        "starts; `ray memory` lists what holds the object store."};
  if (class_id == "node-fail")
    return {
        "Ray's head stopped hearing from a node (its raylet crashed or was too busy): read "
        "that node's raylet.out and dmesg (an OOM kill of the raylet is common).",
        "Identify which nodes failed (below) and read their task output."};
  return {};
}

}  // namespace

std::vector<std::string> RuntimeNextSteps(std::string_view class_id, RuntimeSet runtimes) {
  if (Has(runtimes, Runtime::kRay)) {
    if (std::vector<std::string> ray = RaySteps(class_id); !ray.empty()) return ray;
  }
  switch (EcosystemOf(runtimes)) {
    case Ecosystem::kJax:
      return {};
    case Ecosystem::kPyTorch:
      return TorchSteps(class_id, runtimes);
    case Ecosystem::kUnknown:
      break;
  }
  return NeutralSteps(class_id);
}

std::string FirstFailureStep(std::string_view rank, std::string_view host, uint64_t line,
                             bool others) {
  // "1" is a rank; "task 1" (srun's word) names itself.
  std::string who = rank.empty()                         ? std::string("the failing process")
                    : (rank[0] >= '0' && rank[0] <= '9') ? fmt::format("rank {}", rank)
                                                         : std::string(rank);
  if (!host.empty()) who += fmt::format(" on {}", host);
  return fmt::format("Start with {}, line {}: {}", who, line,
                     others ? "it failed first; the other ranks' errors follow from it."
                            : "the failure is its own.");
}

}  // namespace jobmon::triage
