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

const char* ToString(Weight weight) {
  switch (weight) {
    case Weight::kAsClass:
      return "as-class";
    case Weight::kRoot:
      return "root";
    case Weight::kGeneric:
      return "generic";
    case Weight::kConsequence:
      return "consequence";
    case Weight::kTraceback:
      return "traceback";
  }
  return "?";
}

Weight WeightOf(const FailureClass& c, const Signature& signature) {
  if (signature.weight != Weight::kAsClass) return signature.weight;
  return c.generic ? Weight::kGeneric : Weight::kRoot;
}

namespace {

using W = Weight;

// Sources (project, file, versions), named once where several patterns share
// them. "verified" means the format string was read in that source (or the
// text is in a fixture that program printed here); docs/signature-sources.md
// has the format strings themselves.
constexpr const char* kRef = "jobmon launcher scripts (docs/triage.md)";
constexpr const char* kSlurmStepd =
    "SchedMD/slurm src/slurmd/slurmstepd/req.c _handle_signal_container, 22.05..HEAD "
    "(verified; tests/fixtures/real/pytorch, 22.05.8)";
constexpr const char* kSrunTask =
    "SchedMD/slurm src/srun/launch.c _task_finish (22.05: plugins/launch/slurm/launch_slurm.c), "
    "22.05..HEAD (verified; tests/fixtures/real/pytorch, 22.05.8)";
constexpr const char* kSlurmOom =
    "SchedMD/slurm src/plugins/task/cgroup/task_cgroup_memory.c: 'oom-kill event(s)' 22.05, "
    "'oom_kill event%s' 23.02..HEAD (verified)";
constexpr const char* kCudaTools =
    "NVIDIA CUDA toolkit ptxas / nvcc / cudafe++ (closed source): the 8-column severity "
    "tokens 'fatal   ', 'error   ' and 'N errors detected in the compilation of', read with "
    "strings(1) in CUDA 13.0.88; the same literal is tested in openxla/xla "
    "subprocess_compilation.cc";
constexpr const char* kXlaAsm =
    "openxla/xla xla/stream_executor/cuda/subprocess_compilation.cc CompileGpuAsmUsingPtxAs "
    "('ptxas exited with non-zero error code %d, output: %s'), ptx_compiler_impl.cc "
    "('PTX compilation failed with error code %d'), (read; idx)";
constexpr const char* kTritonErrors =
    "triton-lang/triton python/triton/compiler/errors.py CompilationError ('at L:C:'), "
    "python/triton/runtime/errors.py OutOfResources / PTXASError, "
    "third_party/nvidia/backend/compiler.py make_cubin (read; idx)";
constexpr const char* kInductorErrors =
    "pytorch/pytorch torch/_dynamo/exc.py BackendCompilerFailed, torch/_inductor/exc.py "
    "InductorError, 2.x (read; idx)";
constexpr const char* kCppExtension =
    "pytorch/pytorch torch/utils/cpp_extension.py _build_extension_module / _run_ninja_build "
    "(\"Error building extension '{}'\"), 1.x..2.x (read; idx)";
constexpr const char* kMosaic =
    "jax-ml/jax jax/_src/pallas/mosaic/error_handling.py MosaicError, VerificationError "
    "(MLIR_ERR_PREFIX) (read; git)";
constexpr const char* kHfHub =
    "huggingface/transformers src/transformers/utils/hub.py cached_file / cached_files "
    "(OSError texts), 4.x (read; idx)";
constexpr const char* kHfModeling =
    "huggingface/transformers src/transformers/modeling_utils.py from_pretrained, 4.x (read; idx)";
constexpr const char* kHubErrors =
    "huggingface/huggingface_hub src/huggingface_hub/utils/_http.py hf_raise_for_status "
    "(d61d6ec20 2022-06..HEAD), file_download.py LocalEntryNotFoundError, "
    "hf_request_event_hook OfflineModeIsEnabled (read; git)";
constexpr const char* kTorchStreamReader =
    "pytorch/pytorch caffe2/serialize/inline_container.cc PyTorchStreamReader: "
    "CAFFE_THROW(\"PytorchStreamReader failed \", what, ...), 1.x..2.x (read; idx)";
constexpr const char* kBashJobStatus =
    "bminor/bash jobs.c notify_of_job_status (\"%s: line %d: \") and print_pipeline (pid, "
    "strsignal text padded to LONGEST_SIGNAL_DESC: 24 columns 4.2..5.2, 27 in 5.3, "
    "\"(core dumped) \", the command), glibc strsignal texts (sysdeps/generic/siglist.h) "
    "(verified; tests/fixtures/real/pytorch/shell-*.log, bash 5.2.15)";
constexpr const char* kNcclBootstrap =
    "NVIDIA/nccl src/bootstrap.cc bootstrapNetInit, src/transport/net_socket.cc, "
    "src/transport/net_ib.cc: WARN bodies, v2.4.8-1..HEAD (read; docs/signature-sources.md "
    "section 5)";
constexpr const char* kGlooDevice =
    "pytorch/gloo gloo/transport/tcp/device.cc lookupAddrForIface / lookupAddrForHostname / "
    "sockaddrToInterfaceName, 707c1ca (2017)..HEAD (verified; "
    "tests/fixtures/real/pytorch/spawn-gloo-bad-iface.log, torch 1.13.1)";
constexpr const char* kElasticErrors =
    "pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py "
    "ProcessFailure/ChildFailedError, 1.9..2.x (verified 1.13.1 and a 2.5-era copy)";
constexpr const char* kElasticApi =
    "pytorch/pytorch torch/distributed/elastic/multiprocessing/api.py, 1.9..2.x "
    "(verified 1.13.1)";
constexpr const char* kGlooPair =
    "pytorch/gloo gloo/transport/tcp/pair.cc, 2018-11..HEAD (f834c75 2026-02 appends a hint; "
    "verified, and tests/fixtures/real/pytorch)";
constexpr const char* kGlooBuffer =
    "pytorch/gloo gloo/transport/tcp/unbound_buffer.cc (also uv/), 3dac0ef 2018-11..HEAD "
    "(verified, and tests/fixtures/real/pytorch)";
constexpr const char* kNcclErr =
    "NVIDIA/nccl src/init.cc ncclGetErrorString (ncclRemoteError 2.13.4+); "
    "torch/csrc/distributed/c10d/NCCLUtils.hpp 'NCCL error in:' 1.x..2.x";
constexpr const char* kNcclSocket =
    "NVIDIA/nccl src/include/socket.h, src/misc/socket.cc: 'Net : Connection closed by remote "
    "peer' v2.3..2.15, 'socketProgress: Connection closed by remote peer' v2.16..HEAD (verified)";
constexpr const char* kCudaOom =
    "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc "
    "TORCH_CHECK_WITH(...OutOfMemoryError, 'CUDA out of memory. Tried to allocate ', ...): the "
    "prefix is the same in every stored version read, 1.x '(GPU N; X total capacity; ...)' to "
    "HEAD eb42ad6 '. GPU N has a total capacity of ...' (idx); python type "
    "'torch.cuda.OutOfMemoryError' torch/csrc/Exceptions.cpp 1.13..2.x (verified: Debian 1.13.1 "
    "libtorch_python.so strings, idx 2.x copy), 'torch.OutOfMemoryError' in later copies (idx; "
    "release of the rename not pinned)";
constexpr const char* kCudaErr =
    "pytorch/pytorch c10/cuda/CUDAException.cpp c10_cuda_check_implementation 'CUDA error: ' + "
    "cudaGetErrorString(err) (verified, idx 0e4c6cd); the error texts are libcudart's (closed "
    "source; verified as strings of NVIDIA's libcudart.so.13, CUDA 13.0.96)";
// ROCm builds hipify c10/cuda/* (tools/amd_build/build_amd.py) with the
// Caffe2 trie, which rewrites inside string literals: "CUDA" -> "HIP"
// (torch/utils/hipify/cuda_to_hip_mappings.py, idx), cudaGetErrorString ->
// hipGetErrorString. The HIP runtime's table (ROCm/clr hipamd/src/hip_error.cpp,
// git) has CUDA's texts from rocm-5.3.0; up to rocm-5.2.3 it returned the
// enum's name (hipErrorIllegalAddress).
constexpr const char* kHipErr =
    "pytorch/pytorch c10/cuda/CUDAException.cpp hipified: 'HIP error: ' + hipGetErrorString(err) "
    "(idx: build_amd.py, hipify_python.py, cuda_to_hip_mappings.py); texts from ROCm/clr "
    "ihipGetErrorString, rocm-5.3.0+ (git), enum names up to rocm-5.2.3";
constexpr const char* kC10dSocket =
    "pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp SocketConnectOp::throwTimeoutError, "
    "1.13..2.x (verified: 1.13.1 libtorch and tests/fixtures/real/pytorch, HEAD source)";
constexpr const char* kRendezvousApi =
    "pytorch/pytorch torch/distributed/elastic/rendezvous/api.py (raised in "
    "dynamic_rendezvous.py, c10d_rendezvous_backend.py), 1.9..2.x (verified 1.13.1 and "
    "tests/fixtures/real/pytorch)";
constexpr const char* kKernelOom =
    "torvalds/linux mm/oom_kill.c __oom_kill_process '%s: Killed process %d (%s)' with "
    "'Out of memory' / 'Memory cgroup out of memory' (mm/memcontrol.c), 4.x..6.x "
    "(verified: tests/fixtures/real/pytorch/*.dmesg.txt, kernel 6.18)";
// Real programs' text (tests/fixtures/real/pytorch, round 2): the sources of the start-up,
// native-crash and DataLoader wordings.
constexpr const char* kCudaInit =
    "pytorch/pytorch torch/cuda/__init__.py _lazy_init raise AssertionError('Torch not compiled "
    "with CUDA enabled'), 1.x..HEAD (verified: Debian 1.13.1; tests/fixtures/real/pytorch)";
constexpr const char* kNoNcclBuild =
    "pytorch/pytorch torch/distributed/distributed_c10d.py _new_process_group_helper "
    "RuntimeError(\"Distributed package doesn't have NCCL built in\"), 1.x..2.x (verified: "
    "Debian 1.13.1; tests/fixtures/real/pytorch)";
constexpr const char* kNcclNoGpus =
    "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp ProcessGroupNCCL::"
    "ProcessGroupNCCL TORCH_CHECK (1.x), TORCH_CHECK_WITH(ValueError, ...) (2.x) 'ProcessGroupNCCL "
    "is only supported with GPUs, no GPUs found!' (idx; needs a CUDA build on a GPU-less node)";
constexpr const char* kC10dBind =
    "pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp SocketListenOp::tryListen recordError("
    "'The server socket has failed to bind to {} {}.', addr, error) with the error_code as "
    "'(errno: 98 - Address already in use)', 1.13..HEAD (verified: Debian 1.13.1, HEAD source, "
    "tests/fixtures/real/pytorch)";
constexpr const char* kC10dLibuvListen =
    "pytorch/pytorch torch/csrc/distributed/c10d/TCPStoreLibUvBackend.cpp (the default TCPStore "
    "server from 2.4) 'The server socket has failed to listen on any local network address. port: "
    "{}, useIpv6: {}, code: {}, name: {}, message: {}' with libuv's uv_err_name EADDRINUSE (idx)";
constexpr const char* kErrno98 =
    "CPython Modules/socketmodule.c OSError '[Errno 98] Address already in use' (strerror of "
    "EADDRINUSE, glibc), 3.x (a Python server's bind)";
// Ray 2.32.0 (ray-project/ray tag ray-2.32.0, git; every wording also
// unchanged at master 2024-11-18, the 2.40 branch point): docs/ray.md and
// docs/signature-sources.md "Ray".
constexpr const char* kRayExceptions =
    "ray-project/ray python/ray/exceptions.py (ActorDiedError.BASE_ERROR_MSG, "
    "WorkerCrashedError, OutOfMemoryError, ObjectStoreFullError, RayTaskError's dual type "
    "'RayTaskError(<Cause>)'), ray-2.32.0 (git)";
constexpr const char* kRayGcsActor =
    "ray-project/ray src/ray/gcs/gcs_server/gcs_actor_manager.cc GenWorkerDiedCause, "
    "GenNodeDiedCause, ray-2.32.0 (git)";
constexpr const char* kRayGcsNode =
    "ray-project/ray src/ray/gcs/gcs_server/gcs_node_manager.cc GcsNodeManager::RemoveNode, "
    "ray-2.32.0 (git)";
constexpr const char* kRayRaylet =
    "ray-project/ray src/ray/raylet/node_manager.cc (CreateMemoryUsageRefreshCallback, "
    "CreateOomKillMessageDetails, DisconnectClient), ray-2.32.0 (git)";
constexpr const char* kRayPlasma =
    "ray-project/ray src/ray/core_worker/store_provider/plasma_store_provider.cc "
    "CoreWorkerPlasmaStoreProvider::Create; python/ray/_raylet.pyx spill_objects_handler, "
    "ray-2.32.0 (git)";
constexpr const char* kRayStart =
    "ray-project/ray python/ray/_private/utils.py (connect_error), services.py "
    "(canonicalize_bootstrap_address_or_die), node.py Node.__init__, "
    "src/ray/rpc/gcs_server/gcs_rpc_client.h, src/ray/raylet/agent_manager.cc, "
    "src/ray/rpc/grpc_server.cc, ray-2.32.0 (git)";
constexpr const char* kDataLoaderWorker =
    "pytorch/pytorch torch/csrc/DataLoader.cpp THPModule_errorIfAnyWorkerFails 'DataLoader worker "
    "(pid N) is killed by signal: <strsignal>. ' (the SIGCHLD handler of "
    "torch/utils/data/_utils/signal_handling.py), 1.x..HEAD (verified: Debian 1.13.1 and HEAD "
    "source; tests/fixtures/real/pytorch)";
constexpr const char* kDataLoaderHandler =
    "pytorch/pytorch torch/csrc/DataLoader.cpp SIGNAL_HANDLER 'ERROR: Unexpected bus error | "
    "segmentation fault | floating-point exception encountered in worker.', 1.x..HEAD (verified: "
    "Debian 1.13.1 libtorch_python.so strings, HEAD source)";
constexpr const char* kFaulthandler =
    "CPython Modules/faulthandler.c faulthandler_fatal_error 'Fatal Python error: ' + the "
    "handler's name (Segmentation fault, Aborted, Bus error, Floating point exception, Illegal "
    "instruction), 3.3..3.x (verified 3.11, tests/fixtures/real/pytorch)";
constexpr const char* kSpawnExited =
    "pytorch/pytorch torch/multiprocessing/spawn.py ProcessContext.join ProcessExitedException "
    "'process %d terminated with signal %s' (f-string in 2.x), 1.x..HEAD (verified: Debian 1.13.1, "
    "HEAD source; tests/fixtures/real/pytorch)";
constexpr const char* kGlibcMalloc =
    "glibc malloc/malloc.c malloc_printerr(str): __libc_message '%s\\n' then abort(), 2.26..HEAD "
    "('free(): invalid pointer', 'double free or corruption (out)', 'munmap_chunk(): invalid "
    "pointer', 'malloc(): corrupted top size', ...); before 2.26 '*** Error in `prog': <str>: "
    "0x... ***' (verified: Debian 12 glibc 2.36, tests/fixtures/real/pytorch)";
constexpr const char* kAnomalyNan =
    "pytorch/pytorch torch/csrc/autograd/engine.cpp (anomaly mode) \"Function '\" << name << \"' "
    "returned nan values in its \" << i << \"th output.\", 1.x..2.x, and the Python engine's "
    "f-string copy (idx); verified Debian 1.13.1, tests/fixtures/real/pytorch";
constexpr const char* kDdpUnused =
    "pytorch/pytorch torch/csrc/distributed/c10d/reducer.cpp Reducer::"
    "ensure_prior_reduction_finished 'Expected to have finished reduction in the prior iteration "
    "before starting a new one.', 1.x..HEAD (verified: Debian 1.13.1, idx HEAD; "
    "tests/fixtures/real/pytorch)";
}  // namespace

// CPython's exception line, `<module>.<qualname>: <str>` (kPython), after an
// optional rank/task label: torchrun tee `[default0]:` (1.x) / `[rank0]:`
// (2.x), srun -l `0: `.
const char* const kPythonExceptionLine =
    R"(^(\[(default|rank)\d+\]:|[ \t]*\d+: )?([A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(Error|Exception|Interrupt|Exit|Failure)(: |:?$))";

// The coordinator's accusation (docs/signature-sources.md 6): it names the
// tasks whose heartbeats stopped on the lines that follow.
const std::vector<Signature>& HeartbeatAccusations() {
  static const std::vector<Signature> accusations = {
      // tsl (jax <= 0.4.26) only logs it on the coordinator, lower case,
      // as "Stopping coordination service as the following tasks are ...".
      {R"([Tt]he following tasks are unhealthy \(stopped sending heartbeats\))",
       "google/tsl tsl/distributed_runtime/coordination/coordination_service.cc "
       "StartCheckStaleness LOG(ERROR) 01a839dd 2023-06..00b7447a 2024-04 (git); openxla/xla "
       "xla/tsl/distributed_runtime/coordination/ then xla/pjrt/distributed/coordination/ "
       "coordination_service.cc CheckHeartbeatTimeout UNAVAILABLE status (idx)"},
  };
  return accusations;
}

namespace {

// Framework sources. "git": read in a clone with history, the
// range from the first commit holding the text; "idx": read in stored copies
// of the file, no history.
constexpr const char* kMegatronNan =
    "NVIDIA/Megatron-LM megatron/core/distributed/param_and_grad_buffer.py check_grads "
    "(validate_result message, raised as 'Unexpected result ... (message=...)') and the older "
    "'Rank N: found NaN in local grad norm|forward loss calculation' asserts, e39f9f6 "
    "2023-08..HEAD (git)";
constexpr const char* kMegatronExit =
    "NVIDIA/Megatron-LM megatron/training/training.py print_datetime('exiting program after "
    "receiving SIGTERM.') under --exit-signal-handler, dbe6c72 2021-11..HEAD (git)";
constexpr const char* kDeepSpeedLaunch =
    "microsoft/DeepSpeed deepspeed/launcher/launch.py sigkill_handler, 4f1d827 2021-02..v0.16.4 "
    "(git)";
constexpr const char* kDeepSpeedMinScale =
    "microsoft/DeepSpeed deepspeed/runtime/fp16/loss_scaler.py DynamicLossScaler.update_scale, "
    "44085856 2022-05..v0.16.4 (git)";
constexpr const char* kLightningSignals =
    "Lightning-AI/pytorch-lightning src/lightning/pytorch/trainer/connectors/signal_connector.py "
    "(_slurm_sigusr_handler_fn, _sigterm_notifier_fn), 9f8043e 2023-01..HEAD; 'Requeued SLURM "
    "job' 23c3454 2024-01..HEAD (git; older releases under pytorch_lightning/)";
constexpr const char* kLightningSigterm =
    "Lightning-AI/pytorch-lightning src/lightning/pytorch/utilities/exceptions.py SIGTERMException "
    "(GracefulExitException before 2.0, #16501), c854e4d 2023-01..HEAD (git)";
constexpr const char* kNemoPreemption =
    "NVIDIA/NeMo nemo/utils/callbacks/preemption.py 9ba4abd 2023-04..HEAD and "
    "nemo/lightning/pytorch/callbacks/preemption.py 92f5f53 2024-08..HEAD (git)";
constexpr const char* kAccelerateBatch =
    "huggingface/accelerate src/accelerate/utils/memory.py find_executable_batch_size (HF "
    "Trainer's auto_find_batch_size), 611546f 2022-04..HEAD (git)";
constexpr const char* kCpuAlloc =
    "pytorch/pytorch c10/core/impl/alloc_cpu.cpp alloc_cpu 'DefaultCPUAllocator: can't allocate "
    "memory: you tried to allocate N bytes' (verified: Debian torch 1.13.1 libc10.so strings; "
    "accelerate memory.py names it as the CPU OOM), 1.x..2.x";
constexpr const char* kPython =
    "CPython Lib/traceback.py TracebackException.format / format_exception_only "
    "('<module>.<qualname>: <str>'), 3.x (verified 3.11)";
constexpr const char* kXlaCoord =
    "openxla/xla xla/pjrt/distributed/client.h missed_heartbeat_callback LOG(QFATAL), "
    "xla::Status two-argument era (idx 001918b7, 2023); later replaced by 'the JAX distributed "
    "service detected fatal errors' (docs/signature-sources.md 6)";
constexpr const char* kXlaHeartbeatTask =
    "google/tsl tsl/distributed_runtime/coordination/coordination_service.cc 'Task <name> "
    "heartbeat timeout. This indicates that the remote task has failed, ...' 6a79f3a2 2022-10.."
    "00b7447a 2024-04 (git); openxla/xla xla/tsl/... and xla/pjrt/distributed/coordination/ "
    "(idx, to 2026)";
constexpr const char* kXlaIncarnation =
    "google/tsl coordination_service.cc TaskState::RecordHeartbeat 'Incarnation ID mismatch: "
    "expecting X but got Y. This means the remote task has restarted.' 6a79f3a2 2022-10.."
    "00b7447a 2024-04 (git); openxla/xla '<task> Heartbeat: Incarnation ID mismatch: expecting "
    "...' (idx, 2026)";
constexpr const char* kXlaOom =
    "tensorflow/tensorflow tensorflow/stream_executor/tf_allocator_adapter.cc "
    "ResourceExhausted('Out of memory while trying to allocate ', size, ' bytes.') (idx "
    "26c7ffd); openxla/xla xla/stream_executor/integrations/tf_allocator_adapter.cc "
    "MemoryAllocationError 'Out of ' ['host '] 'memory while trying to allocate N bytes.' "
    "(idx 370cfa8): the BFC allocator's failure seen through PJRT";

std::vector<Signature> Join(std::vector<Signature> first, const std::vector<Signature>& then) {
  first.insert(first.end(), then.begin(), then.end());
  return first;
}

// Next-step texts follow docs/triage.md's templates; where jobmon does the
// step itself, they name the jobmon command.
std::vector<FailureClass> BuildTable() {
  using C = Category;
  return {
      // Infrastructure failures (before training starts).
      {"container-pull-fail",
       C::kInfrastructure,
       "Docker pull",
       "Image pull or registry auth failed.",
       {{R"(\[ERROR\] Pull failed for)", kRef},
        {R"(\[ERROR\] Authenticated pull failed)", kRef},
        {R"(\[ERROR\] Login to .* failed)", kRef}},
       false,
       {"Verify the image name in container_env.sh.", "Check registry credentials.",
        "Try a manual docker pull."}},
      {"container-load-fail",
       C::kInfrastructure,
       "Docker pull",
       "Tarball load failed.",
       {{R"(\[ERROR\] Unable to determine image name or ID from docker load output)", kRef}},
       false,
       {"Check the image tarball and re-run docker load by hand."}},
      {"no-gpu",
       C::kInfrastructure,
       "Container start",
       "No GPU devices visible.",
       {{R"(WARNING: No GPU devices detected)", kRef},
        {R"(Torch not compiled with CUDA enabled)", kCudaInit},
        {R"(Distributed package doesn't have NCCL built in)", kNoNcclBuild},
        {R"(ProcessGroupNCCL is only supported with GPUs, no GPUs found)", kNcclNoGpus}},
       false,
       {"Check that the node has GPUs (rocm-smi or nvidia-smi).",
        "Check the container device flags in _container.sh."}},
      {"nccl-nic-fail",
       C::kInfrastructure,
       "Container start",
       "Multi-node: no usable network interface for the collective library (the one "
       "NCCL_SOCKET_IFNAME or GLOO_SOCKET_IFNAME names does not exist or has no address).",
       {{R"(NCCL FATAL.*Failed to auto-detect NCCL_SOCKET_IFNAME)", kRef},
        // The family: the library says it found no interface to bind.
        {R"(Bootstrap : no socket interface found)", kNcclBootstrap},
        {R"(NET/Socket : (no interface found|No usable listening interface found))",
         kNcclBootstrap},
        {R"(NET/IB : No IP interface found)", kNcclBootstrap},
        {R"(Unable to find (address|interface) for:? \S)", kGlooDevice}},
       false,
       {"Run `ip -br addr` on the compute nodes: the interface named by NCCL_SOCKET_IFNAME / "
        "GLOO_SOCKET_IFNAME must exist there and have an address.",
        "Unset the variable to let the library choose, or set it to the nodes' cluster "
        "interface (a prefix such as `eth` or `ib` matches every numbered one)."}},
      {"port-fail",
       C::kInfrastructure,
       "Job start",
       "Port allocation failed.",
       {{R"(FATAL: Could not find a free port for JAX coordinator)", kRef},
        {R"(FATAL: Could not find a free port for Ray)", kRef},
        {R"(The server socket has failed to bind to \S+ \(errno: 98 - Address already in use\))",
         kC10dBind},
        {R"(The server socket has failed to listen on any local network address\. port: \d+, useIpv6: \w+, code: -98, name: EADDRINUSE)",
         kC10dLibuvListen},
        {R"(\[Errno 98\] Address already in use)", kErrno98}},
       false,
       {"Check for stale processes holding ports on the head node.", "Resubmit the job."}},
      {"model-not-found",
       C::kInfrastructure,
       "Training start",
       "The model, its weights or a checkpoint could not be found or loaded (an unknown name, a "
       "missing file, a hub that cannot be reached or is gated, a corrupt archive).",
       {{R"(!!! Unknown model:)", kRef},
        {R"(!!! Model name resolution failed)", kRef},
        // One family, whichever library words it.
        {R"(is not a local folder and is not a valid model identifier listed on)", kHfHub},
        {R"(does not appear to have (a file named|files named))", kHfHub},
        {R"(We couldn't connect to '[^']+' to load (the files|this file))", kHfHub},
        {R"(is not a valid git identifier \(branch name, tag name or commit id\))", kHfHub},
        {R"(You are trying to access a gated repo)", kHfHub},
        {R"(Error no file named .+ found in directory )", kHfModeling},
        {R"((Repository|Revision|Entry) Not Found for url: )", kHubErrors},
        {R"(Cannot find the requested files in the disk cache and outgoing traffic has been disabled)",
         kHubErrors},
        {R"(Cannot reach \S+: offline mode is enabled)", kHubErrors},
        {R"(PytorchStreamReader failed (reading zip archive|locating file|reading file|checking magic number))",
         kTorchStreamReader}},
       false,
       {"Check the model name or path the job loads (from_pretrained, --model, the resume "
        "path): a local path must hold its config and weights.",
        "Nodes without internet access: download the model beforehand (huggingface-cli "
        "download) and set HF_HUB_OFFLINE=1; a gated repository needs a token (HF_TOKEN).",
        "A checkpoint that fails to load is truncated or corrupt: compare its size with the "
        "save's, and resume from an earlier one."}},
      {"patch-branch-fail",
       C::kInfrastructure,
       "Container start",
       "MaxText hotfix branch checkout failed.",
       {{R"(\[FAIL\] Failed to check out)", kRef}},
       false,
       {"Check that the hotfix branch exists and is reachable from the nodes."}},
      {"ray-start-fail",
       C::kInfrastructure,
       "Ray init",
       "Ray cluster bootstrap failed (training falls back to non-Ray).",
       {{R"(\[Ray\] HEAD failed to start)", kRef},
        {R"(\[Ray\] HEAD timeout)", kRef},
        {R"(\[Ray\] WORKER failed)", kRef},
        // Ray's own words when its head (GCS) or a raylet cannot start or
        // be reached.
        {R"(Unable to connect to GCS \(ray head\) at )", kRayStart},
        {R"(Failed to connect to GCS (at address \S+ )?within \d+ seconds)", kRayStart, W::kRoot},
        {R"(Could not find any running Ray instance)", kRayStart, W::kRoot},
        {R"(Could not read '\S+' from GCS\. Did GCS start successfully\?)", kRayStart, W::kRoot},
        {R"(The current node timed out during startup)", kRayStart, W::kRoot},
        {R"(The raylet exited immediately because)", kRayStart, W::kRoot},
        {R"(Failed to start the grpc server\. The specified port is \d+)", kRayStart, W::kRoot}},
       false,
       {"Non-critical: training falls back to non-Ray mode.", "Check port conflicts.",
        "Check the Ray logs in the job dir."}},
      // Stage timeouts.
      {"preflight-timeout",
       C::kStageTimeout,
       "Preflight",
       "Preflight checks hung (stale GPU processes, NFS, NUMA).",
       {{R"(== Preflight TIMEOUT)", kRef}},
       false,
       {"Check for stuck GPU processes: rocm-smi / nvidia-smi.",
        "Increase the timeout: STAGE_TIMEOUTS=\"preflight:1800\"."}},
      {"pull-timeout",
       C::kStageTimeout,
       "Docker pull",
       "Image pull took too long (slow registry or large image).",
       {{R"(== Docker pull TIMEOUT)", kRef}},
       false,
       {"Check network/registry speed.", "Pre-pull the image.",
        "Increase the timeout: STAGE_TIMEOUTS=\"pull:1800\"."}},
      {"ecc-timeout",
       C::kStageTimeout,
       "ECC check",
       "ECC memory check hung (GPU driver issue).",
       {{R"(== ECC check TIMEOUT)", kRef}},
       false,
       {"Check the GPU driver state on the node (dmesg, rocm-smi / nvidia-smi).",
        "Drain the node if the ECC check keeps hanging."}},
      {"train-timeout",
       C::kStageTimeout,
       "Training",
       "Training exceeded the configured wall-clock limit.",
       {{R"(== Training TIMEOUT)", kRef},
        {R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+ DUE TO TIME LIMIT)", kSlurmStepd}},
       false,
       {"Increase the timeout: STAGE_TIMEOUTS=\"train:<seconds>\".",
        "Verify it is not a hang: check the progress projection below (`jobmon triage`)."}},
      // Training failures.
      {"heartbeat-timeout",
       C::kTraining,
       "Training",
       "JAX coordination heartbeat timeout — a known bug; the accused tasks are usually alive.",
       Join(HeartbeatAccusations(),
            {{R"(The tasks have crashed)", kRef},
             {R"(Terminating process because the coordinator detected missing heartbeats)",
              kXlaCoord},
             {R"(Terminating process because of missing heartbeat response from the coordinator)",
              kXlaCoord},
             {R"(heartbeat timeout\. This indicates that the remote task has failed)",
              kXlaHeartbeatTask}}),
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
       {{R"(Killed \(from OOM killer\))", kRef},
        {R"(oom-kill)", kRef},
        {R"(Out of memory)", kRef},
        {R"((Out of memory|Memory cgroup out of memory): Killed process \d+)", kKernelOom},
        {R"(Detected \d+ oom[-_]kill event)", kSlurmOom},
        {R"(srun: error: \S+: tasks? [0-9,-]+: Out Of Memory)", kSrunTask},
        {R"(DefaultCPUAllocator: can't allocate memory)", kCpuAlloc},
        // Ray's memory monitor killed a task or actor on a node short of
        // memory (before the kernel would); and the object store, host
        // shared memory, full.
        {R"(Task was killed due to the node running low on memory)", kRayRaylet, W::kRoot},
        {R"(which exceeds the memory usage threshold of [0-9.]+\. Ray killed this worker)",
         kRayRaylet, W::kRoot},
        {R"(Worker exit type: NODE_OUT_OF_MEMORY)", kRayGcsActor, W::kRoot},
        {R"(ray\.exceptions\.OutOfMemoryError)", kRayExceptions, W::kRoot},
        {R"(in object store because it is full\. Object size is \d+ bytes)", kRayPlasma, W::kRoot},
        {R"(ray\.exceptions\.ObjectStoreFullError)", kRayExceptions, W::kRoot},
        {R"(An unexpected internal error occurred while the IO worker was spilling objects)",
         kRayPlasma, W::kRoot},
        // Python's own allocation failure (an address-space limit, no
        // overcommit), printed as a traceback's last line.
        {R"((^|[^\w.])MemoryError(: |$))",
         "CPython Objects/exceptions.c MemoryError, printed by Lib/traceback.py "
         "format_exception_only ('MemoryError' alone when it has no message), 3.x (verified 3.11, "
         "tests/fixtures/real/pytorch spawn-host-alloc-fail)"}},
       false,
       {"Reduce per_device_batch_size.", "Enable remat_policy=full.",
        "Check for a checkpoint memory spike (DP replica #0 pattern)."},
       {"oom-gpu"}},
      {"oom-gpu",
       C::kTraining,
       "Training",
       "GPU memory exhausted during compilation or execution.",
       {{R"(OUT_OF_MEMORY)", kRef},
        {R"(XLA_ERROR)", kRef},
        {R"(ResourceExhausted)", kRef},
        {R"(RESOURCE_EXHAUSTED)",
         "openxla/xla absl::StatusCode name in XlaRuntimeError text, 2022..2026"},
        {R"((CUDA|HIP) out of memory\. Tried to allocate)", kCudaOom},
        {R"(torch\.(cuda\.)?OutOfMemoryError)", kCudaOom},
        {R"(CUDA error: out of memory)", kCudaErr},
        {R"(HIP error: (out of memory|hipErrorOutOfMemory|hipErrorMemoryAllocation))", kHipErr},
        {R"(No executable batch size found, reached zero)", kAccelerateBatch},
        // The host variant is XLA's pinned host pool (XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB),
        // not the kernel's OOM killer: same advice as a device OOM.
        {R"(Out of (host )?memory while trying to allocate)", kXlaOom}},
       false,
       {"Reduce per_device_batch_size or max_target_length.", "Try remat_policy=full.",
        "Check the XLA buffer assignment for memory usage."},
       // XLA wraps ptxas's register allocation failure in RESOURCE_EXHAUSTED
       // (ptx_compiler_helpers.cc PtxRegisterAllocationError): a compiler's.
       {"compile-fail"}},
      {"nccl-timeout",
       C::kTraining,
       "Training",
       "NCCL/RCCL collective timeout — a network or GPU issue.",
       {{R"(NCCL WARN)", "NVIDIA/nccl src/debug.cc WARN header, v2.3.7..HEAD"},
        {R"(NCCL error)", kNcclErr},
        {R"(Timeout waiting for)", kRef},
        {R"(ncclSystemError)", kNcclErr},
        {R"(ncclRemoteError|remote process exited or there was a network error)", kNcclErr},
        {R"(Watchdog caught collective operation timeout)",
         "pytorch/pytorch ProcessGroupNCCL.cpp workCleanupLoop / WorkNCCL::checkTimeout, "
         "1.12..2.x (verified)"},
        {R"(Caught collective operation timeout)",
         "pytorch/pytorch ProcessGroupNCCL.cpp WorkNCCL::synchronizeInternal (blocking wait), "
         "1.12..2.1"},
        {R"(Exception \(either an error or timeout\) detected by watchdog)",
         "pytorch/pytorch ProcessGroupNCCL.cpp watchdog loop LOG(ERROR) logPrefix(), 'Exception "
         "(either an error or timeout) detected by watchdog at work: ', seq, ', last enqueued "
         "NCCL work: ', ... (idx: pgStatus_-era copies; later 'failure detected by watchdog')"},
        {R"(failure detected by watchdog at work sequence id: \d)",
         "pytorch/pytorch ProcessGroupNCCL.cpp watchdog (Watchdog::runLoop), 2.5+ era wording "
         "(idx: two stored copies of the file with desyncDebugger_)"},
        {R"(Heartbeat monitor timed out)",
         "pytorch/pytorch ProcessGroupNCCL.cpp heartbeatMonitor, 2.3+"},
        {R"(ProcessGroupNCCL's watchdog got stuck for)",
         "pytorch/pytorch ProcessGroupNCCL.cpp heartbeatMonitor exit message, 2.3+"},
        {R"(Timed out waiting \d+ms for (recv|send) operation to complete)", kGlooBuffer},
        // Start-up: the ranks never meet (a TCPStore or a torchrun rendezvous
        // that times out). The taxonomy has no rendezvous class; this is its
        // nearest (a peer unreachable over the network, or never started).
        {R"(The client socket has timed out after \S+ while trying to connect to)", kC10dSocket},
        {R"(^(\[(default|rank)\d+\]:|[ \t]*\d+: )?RuntimeError: Socket Timeout$)",
         "pytorch/pytorch torch/csrc/distributed/c10d/TCPStore.cpp TCPStore::doWait and "
         "Utils.hpp SYSCHECK, 1.x..1.13 (verified 1.13.1 libtorch and "
         "tests/fixtures/real/pytorch); 2.x words it 'wait timeout after'"},
        {R"(Timed out after \d+ seconds waiting for clients\. \d+/\d+ clients joined)",
         "pytorch/pytorch torch/csrc/distributed/c10d/TCPStore.cpp waitForWorkers, 2.x (HEAD "
         "source; not in 1.13)"},
        {R"(Timed out initializing process group in store based barrier)",
         "pytorch/pytorch torch/distributed/distributed_c10d.py _store_based_barrier, 1.8..2.0 "
         "(verified 1.13.1)"},
        // Not RendezvousConnectionError: a healthy run's agent logs it as a
        // WARNING at shutdown (tests/fixtures/real/pytorch/torchrun-healthy);
        // when the store is unreachable, the socket timeout above precedes it.
        {R"(RendezvousTimeoutError)", kRendezvousApi},
        {R"(Some NCCL operations have failed or timed out)",
         "pytorch/pytorch ProcessGroupNCCL.cpp WorkNCCL::handleNCCLGuard (one sentence ending "
         "'taking the entire process down.') then WorkNCCL::handleException (logPrefix() first, "
         "the tear-down sentence on its own line), 1.12..2.x (idx; follows the watchdog line)",
         W::kConsequence},
        {R"(Connection closed by peer)", kGlooPair, W::kConsequence},
        {R"(Read error .*Connection reset by peer)", kGlooPair, W::kConsequence},
        {R"(Application timeout caused pair closure)", kGlooBuffer, W::kConsequence},
        {R"(Connection closed by remote peer)", kNcclSocket, W::kConsequence}},
       false,
       {"Check network health (ip link, ethtool, RDMA counters): "
        "`jobmon diagnose <job> --playbook network`.",
        "Run with _env_NCCL_DEBUG=INFO for detailed NCCL logs.",
        "Check whether specific nodes fail consistently."}},
      {"compile-fail",
       C::kTraining,
       "Compilation",
       "A compiler failed: XLA, Triton, Inductor, ptxas/nvcc, Mosaic or a C++/CUDA extension "
       "build (not a memory exhaustion, whatever status code wraps it).",
       {{R"(INTERNAL: Failed to compile)", kRef},
        {R"(XLA compilation failed)", kRef},
        {R"(HloModule.*[Ee]rror)", kRef},
        // One family, whichever component words it.
        {R"(\bptxas\b.*\b(fatal|error) +: )", kCudaTools},
        {R"(\bnvcc (fatal|error) +: )", kCudaTools},
        {R"(\d+ errors? detected in the compilation of ")", kCudaTools},
        {R"((ptxas|nvlink|fatbinary) exited with non-zero error code \d+)", kXlaAsm},
        {R"(PTX compilation failed with error code \d+)", kXlaAsm},
        {R"(PTXAS error: )", kTritonErrors},
        {R"(Internal Triton PTX codegen error)", kTritonErrors},
        {R"(triton\.compiler\.errors\.\w*(Error|Failure|Construct): at \d+:\d+:)", kTritonErrors},
        {R"(out of resource: [\w ]+, Required: \d+, Hardware limit: \d+)", kTritonErrors},
        {R"(BackendCompilerFailed: )", kInductorErrors},
        {R"(InductorError: )", kInductorErrors},
        {R"(Error building extension ')", kCppExtension},
        {R"(Pallas encountered an internal verification error)", kMosaic},
        {R"(MosaicError: )", kMosaic}},
       false,
       {"Read the compiler's own message in the log (the first ptxas/nvcc/Triton/XLA error "
        "line): it names the kernel and what failed.",
        "A toolkit older than the GPU (`Value 'sm_…' is not defined for option 'gpu-name'`, "
        "`Unsupported gpu architecture`) needs a newer CUDA toolkit in the job's environment.",
        "Out of registers or shared memory (`out of resource`, `Register allocation failed`): "
        "smaller block sizes or fewer stages for the kernel; it is not a GPU memory OOM."}},
      {"python-exception",
       C::kTraining,
       "Training",
       "Unhandled Python exception.",
       {{R"(Traceback \(most recent call last\):)", kPython, W::kTraceback},
        // CUDA/HIP runtime errors reach the log as the text of a Python
        // exception (c10::Error) or of a C++ terminate; the taxonomy has no
        // GPU-fault class, so they are this generic one.
        {R"(CUDA error: (an illegal memory access was encountered|unspecified launch failure|uncorrectable ECC error encountered|misaligned address|an illegal instruction was encountered|device-side assert triggered))",
         kCudaErr},
        // A training run that diverged: the framework's own check stops it
        // (a peer's NCCL error after this rank died is its consequence).
        {R"(found (NaN|Inf) in local (grad norm|forward loss calculation))", kMegatronNan,
         W::kRoot},
        {R"(Current loss scale already at minimum - cannot decrease scale anymore)",
         kDeepSpeedMinScale, W::kRoot},
        // autograd's anomaly mode names the op whose gradient went NaN; DDP's
        // reducer refuses a step whose previous one left parameters unreduced.
        {R"(Function '\w+' returned nan values in its \d+th output)", kAnomalyNan, W::kRoot},
        {R"(Expected to have finished reduction in the prior iteration before starting a new one)",
         kDdpUnused, W::kRoot},
        {R"(HIP error: (an illegal memory access was encountered|unspecified launch failure|uncorrectable ECC error encountered|misaligned address|an illegal instruction was encountered|device-side assert triggered|hipErrorIllegalAddress|hipErrorLaunchFailure|hipErrorECCNotCorrectable))",
         kHipErr}},
       true,
       {"Read the full traceback (quoted below).", "Check whether it is a known MaxText issue.",
        "Verify the config parameters."}},

      {"signal-kill",
       C::kTraining,
       "Training",
       "Training process killed by a signal (SIGSEGV, SIGABRT, ...).",
       {{R"(Training subprocess killed by)", kRef},
        {R"(srun: error: \S+: tasks? [0-9,-]+: (Killed|Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception|CPU time limit exceeded|File size limit exceeded|Trace/breakpoint trap|Bad system call))",
         kSrunTask, W::kRoot},
        {R"(Signal \d+ \(SIG(KILL|SEGV|ABRT|BUS|ILL|FPE)\) received by PID)", kElasticErrors,
         W::kRoot},
        {R"(failed \(exitcode: -(9|11|6|7|4|8)\) local_rank)", kElasticApi, W::kRoot},
        {R"(exits with return code = -(9|11|6|7|4|8)\b)",
         "microsoft/DeepSpeed deepspeed/launcher/launch.py sigkill_handler, 499800c 2021-11..HEAD",
         W::kRoot},
        // A DataLoader worker's death, reported by the process that owns
        // it (the worker's own handler prints the second line first).
        {R"(DataLoader worker \(pid \d+\) is killed by signal: (Killed|Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction|CPU time limit exceeded|File size limit exceeded))",
         kDataLoaderWorker, W::kRoot},
        // SIGTERM, SIGINT or SIGHUP: the worker was being shut down (its
        // DataLoader's owner failed or is exiting), not a death of its own.
        {R"(DataLoader worker \(pid \d+\) is killed by signal: (Terminated|Interrupt|Hangup))",
         kDataLoaderWorker, W::kConsequence},
        {R"(ERROR: Unexpected (bus error|segmentation fault|floating-point exception) encountered in worker)",
         kDataLoaderHandler, W::kRoot},
        {R"(Fatal Python error: (Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction))",
         kFaulthandler, W::kRoot},
        {R"(process \d+ terminated with signal SIG(KILL|SEGV|ABRT|BUS|ILL|FPE)\b)", kSpawnExited,
         W::kRoot},
        // glibc's heap checks abort the process (SIGABRT) after one line.
        {R"((^|\]:|: )(free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): (invalid|corrupted|double free|unaligned|unsorted|smallbin|largebin|memory corruption))",
         kGlibcMalloc, W::kRoot},
        {R"((^|\]:|: )(double free or corruption \(|corrupted size vs\. prev_size|corrupted double-linked list))",
         kGlibcMalloc, W::kRoot},
        {R"(\*\*\* Error in `[^']*': )", kGlibcMalloc, W::kRoot},
        {R"(died with <Signals\.SIG(KILL|SEGV|ABRT|BUS|ILL|FPE): \d+>)",
         "CPython Lib/subprocess.py CalledProcessError.__str__ (accelerate simple launcher), 3.x "
         "(verified 3.11)",
         W::kRoot},
        // A batch script's shell on its foreground command killed by a
        // signal: the mechanism; a cause the log gives before it wins.
        {R"(: line \d+: +\d+ (Killed|Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception|CPU time limit exceeded|File size limit exceeded|Trace/breakpoint trap|Bad system call)( |$))",
         kBashJobStatus, W::kConsequence},
        // The SIGTERM of a cancel, a time limit or srun --kill-on-bad-exit.
        {R"(srun: error: \S+: tasks? [0-9,-]+: Terminated)", kSrunTask, W::kConsequence},
        {R"(Signal \d+ \(SIG(TERM|INT|HUP)\) received by PID)", kElasticErrors, W::kConsequence},
        {R"(SignalException: Process \d+ got signal: \d+)", kElasticApi, W::kConsequence}},
       true,
       {"Check for core dumps: <job_dir>/core*, <outputs_root>/core*, COREDUMP_EXTRA_DIRS.",
        "Inspect with gdb python3 <core_file> inside the container.", "See docs/debugging.md."}},
      {"subprocess-fail",
       C::kTraining,
       "Training",
       "Training process exited non-zero (read the preceding output).",
       {{R"(Training subprocess exited with code)", kRef},
        {R"(srun: error: \S+: tasks? [0-9,-]+: Exited with exit code [1-9])", kSrunTask},
        {R"(failed \(exitcode: [1-9]\d*\) local_rank)", kElasticApi},
        {R"(^\s*exitcode\s*: [1-9]\d* \(pid)", kElasticErrors},
        {R"(exits with return code = [1-9])",
         "microsoft/DeepSpeed deepspeed/launcher/launch.py, 499800c 2021-11..HEAD"},
        {R"(Command '.*' returned non-zero exit status \d+)",
         "CPython Lib/subprocess.py CalledProcessError.__str__ (accelerate simple launcher), 3.x "
         "(verified 3.11)"},
        // DeepSpeed's launcher kills the other ranks once one exited.
        {R"(Killing subprocess \d+)", kDeepSpeedLaunch, W::kConsequence},
        // The launcher's summary of a worker's failure: the Root Cause block
        // names the class (exitcode / Signal lines above).
        {R"(ChildFailedError)", kElasticErrors, W::kConsequence},
        {R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+ DUE TO TASK FAILURE)", kSlurmStepd,
         W::kConsequence},
        {R"(\*\*\* (JOB|STEP) \S+ ON \S+ FAILED \(non-zero exit code)", kSlurmStepd},
        // spawn's word for a rank that exited non-zero without a Python
        // exception (one it raised is a ProcessRaisedException instead).
        {R"(process \d+ terminated with exit code [1-9]\d*)",
         "pytorch/pytorch torch/multiprocessing/spawn.py ProcessContext.join "
         "ProcessExitedException "
         "'process %d terminated with exit code %d' (f-string in 2.x), 1.x..HEAD (verified: Debian "
         "1.13.1; tests/fixtures/real/pytorch spawn-exit-code)"}},
       true,
       {"Read the output preceding the exit (evidence below)."}},
      {"actor-fail",
       C::kTraining,
       "Training",
       "Ray actor exception.",
       {{R"(Actor failed:)", kRef},
        // Ray's report of an actor or task worker that died: a mechanism,
        // whose cause (the memory monitor, the node's death, the worker's
        // own crash) explains it when the log shows one.
        {R"(The actor died unexpectedly before finishing this task)", kRayExceptions},
        {R"(The actor is dead because its worker process has died\. Worker exit type: (SYSTEM_ERROR|USER_ERROR))",
         kRayGcsActor},
        {R"(The worker died unexpectedly while executing this task)", kRayExceptions},
        {R"(A worker died or was killed while executing a task by an unexpected system error)",
         kRayRaylet},
        {R"(ray\.exceptions\.(ActorDiedError|RayActorError|WorkerCrashedError))", kRayExceptions}},
       true,
       {"Read the actor traceback (evidence below).", "Check the Ray logs in the job dir."}},
      // Job-level status.
      {"cancelled",
       C::kJob,
       "Job",
       "User or scheduler cancelled the job.",
       {{R"(CANCELLED)", kRef},
        {R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT)", kSlurmStepd},
        {R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+ DUE TO PREEMPTION)", kSlurmStepd,
         W::kRoot},
        // Ctrl-C (SIGINT from the terminal or a scheduler) left as Python's
        // own exception: the interrupt is the mechanism, as for a SIGTERM.
        {R"(^(\[(default|rank)\d+\]:|[ \t]*\d+: )?KeyboardInterrupt$)",
         "CPython Modules/signalmodule.c default SIGINT handler raises KeyboardInterrupt, printed "
         "alone by Lib/traceback.py, 3.x (verified 3.11, tests/fixtures/real/pytorch "
         "spawn-keyboard-interrupt)",
         W::kConsequence},
        {R"(Received \d+ death signal, shutting down workers)",
         "pytorch/pytorch torch/distributed/elastic/agent/server/api.py, 1.9..2.x (verified "
         "1.13.1)",
         W::kConsequence},
        // Frameworks handling the SIGTERM (or Lightning's SIGUSR1 requeue
        // signal) of a cancel, a time limit or a preemption: what they
        // print is the consequence; Slurm's own line names the cause.
        {R"(Main process received SIG(TERM|INT), exiting)", kDeepSpeedLaunch, W::kConsequence},
        {R"(\[exiting program after receiving SIGTERM\.\])", kMegatronExit, W::kConsequence},
        {R"(Handling auto-requeue signal: \d+)", kLightningSignals, W::kConsequence},
        {R"(Requeued SLURM job: )", kLightningSignals, W::kConsequence},
        {R"(Received SIGTERM: \d+)", kLightningSignals, W::kConsequence},
        {R"(\b(SIGTERMException|GracefulExitException)\b)", kLightningSigterm, W::kConsequence},
        {R"((Preemption detected|Received SIGTERM), saving checkpoint and exiting)",
         kNemoPreemption, W::kConsequence}},
       true,
       {"Cancellation is the mechanism, not the root cause: check the progress projection — a "
        "last step far behind the expected step means a hang was cancelled.",
        "Check for preceding errors (NCCL, OOM, heartbeat). If there is no underlying issue, no "
        "action is needed."}},
      {"node-fail",
       C::kJob,
       "Job",
       "One or more nodes exited with errors.",
       // Also NODE_EXIT lines with a non-143 exit code, decoded by the scanner.
       {{R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+ DUE TO NODE FAILURE)", kSlurmStepd,
         W::kRoot},
        {R"(\*\*\* (JOB|STEP) \S+ ON \S+ UNCORRECTABLE MEMORY ERROR AT)",
         "SchedMD/slurm slurmstepd req.c, 22.05..25.05", W::kRoot},
        {R"(Incarnation ID mismatch: expecting \d+ but got \d+)", kXlaIncarnation, W::kRoot},
        // Ray's GCS marked a node dead after missed heartbeats (the raylet
        // crashed, or was too busy to answer); its tasks and actors die of it.
        {R"(has been marked dead because the detector has missed too many heartbeats from it)",
         kRayGcsNode, W::kRoot},
        {R"(Raylet is terminated\. Termination is unexpected)",
         "ray-project/ray python/ray/_private/process_watcher.py report_raylet_error_logs, "
         "ray-2.32.0 (git)",
         W::kRoot},
        {R"(The actor died because its node has died)", kRayGcsActor, W::kConsequence},
        {R"(Task failed due to the node \(where this task was running\)\s+was dead or unavailable)",
         "ray-project/ray src/ray/core_worker/transport/direct_task_transport.cc "
         "HandleGetTaskFailureCause, ray-2.32.0 (git)",
         W::kConsequence}},
       true,
       {"Identify which nodes failed (below) and read their task output.",
        "Exit 137: likely OOM. Exit 134/139: check core dumps."}},
      {"stage-fail",
       C::kJob,
       "Job",
       "A non-timeout stage failure (check the exit code).",
       {{R"(^(\d+: )?== .* FAILED \(exit=)", kRef}},
       true,
       {"Read the stage's output before the failure line."}},
      // Derived from progress and status; no signature.
      {"hang",
       C::kDerived,
       "Training",
       "Training steps stopped advancing while the job stayed alive — almost always an NCCL/RCCL "
       "collective deadlock with every node waiting on the others.",
       // Mostly derived from the steps; a watchdog inside the job that saw
       // no progress says so itself, before it dumps every thread and exits.
       {{R"(^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!$)",
         "python/cpython Modules/faulthandler.c format_timeout (dump_traceback_later), 3.x "
         "(verified; tests/fixtures/real/pytorch/spawn-watchdog-hang.log, 3.11)"},
        // The DataLoader's own watchdog: no batch from its workers within
        // its `timeout` (a stalled read, a stuck worker).
        {R"(DataLoader timed out after [0-9.]+ seconds)",
         "pytorch/pytorch torch/utils/data/dataloader.py _MultiProcessingDataLoaderIter."
         "_try_get_data 'DataLoader timed out after {} seconds', 1.x..HEAD (verified: Debian "
         "1.13.1; tests/fixtures/real/pytorch/spawn-loader-timeout.log)"}},
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
       {"Compare step time with system metrics: `jobmon diagnose <job> --playbook training`.",
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
      // fp16 dynamic loss scaling skipping a step on overflow is normal
      // (microsoft/DeepSpeed deepspeed/runtime/fp16/loss_scaler.py update_scale
      // ac2c9ff 2023-03..v0.16.4, fused_optimizer.py step; git).
      R"(\[deepspeed\] OVERFLOW! Rank \d+ Skipping step)",
      R"(Overflow detected\. Skipping step\. Attempted loss scale)",
  };
  return patterns;
}

}  // namespace jobmon::triage
