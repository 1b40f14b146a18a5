#include "jobmon/triage/runtime.h"

#include <array>

namespace jobmon::triage {

namespace {

struct Mark {
  std::string_view text;
  Runtime runtime;
};

// Module paths as traceback frames print them (`File ".../torch/nn/...`),
// the launchers' logger and exception names, and each tool's own prefix.
// Sources: pytorch/pytorch torch/distributed/elastic (logger names
// `torch.distributed.elastic.*`, ChildFailedError) and
// torch/multiprocessing/spawn.py (ProcessRaisedException,
// ProcessExitedException; "-- Process %d terminated with the following
// error"); Slurm's srun/slurmstepd message prefixes (src/srun, src/slurmd);
// jax-ml/jax (jaxlib, XlaRuntimeError); MaxText's pyconfig ("Config param");
// the other projects' package paths.
constexpr std::array kMarks = {
    Mark{"/torch/", Runtime::kPyTorch},
    Mark{"torch.distributed", Runtime::kPyTorch},
    Mark{"torch.distributed.elastic", Runtime::kTorchrun},
    Mark{"torch.distributed.run", Runtime::kTorchrun},
    Mark{"torchrun", Runtime::kTorchrun},
    Mark{"ChildFailedError", Runtime::kTorchrun},
    Mark{"torch.multiprocessing", Runtime::kTorchSpawn},
    Mark{"torch/multiprocessing/spawn.py", Runtime::kTorchSpawn},
    Mark{"ProcessRaisedException", Runtime::kTorchSpawn},
    Mark{"ProcessExitedException", Runtime::kTorchSpawn},
    Mark{"srun: ", Runtime::kSrun},
    Mark{"slurmstepd: ", Runtime::kSrun},
    Mark{"/jax/", Runtime::kJax},
    Mark{"jaxlib", Runtime::kJax},
    Mark{"XlaRuntimeError", Runtime::kJax},
    Mark{"MaxText", Runtime::kMaxText},
    Mark{"maxtext", Runtime::kMaxText},
    Mark{"Config param ", Runtime::kMaxText},
    Mark{"deepspeed", Runtime::kDeepSpeed},
    Mark{"DeepSpeed", Runtime::kDeepSpeed},
    Mark{"pytorch_lightning", Runtime::kLightning},
    Mark{"lightning/", Runtime::kLightning},
    Mark{"lightning.pytorch", Runtime::kLightning},
    Mark{"/transformers/", Runtime::kHuggingFace},
    Mark{"huggingface_hub", Runtime::kHuggingFace},
    Mark{"/megatron/", Runtime::kMegatron},
    Mark{"Megatron", Runtime::kMegatron},
    // ray-project/ray: its exception module, raylet lines forwarded to the
    // driver, a task's proctitle, its package path (docs/ray.md).
    Mark{"ray.exceptions.", Runtime::kRay},
    Mark{"(raylet)", Runtime::kRay},
    Mark{"ray::", Runtime::kRay},
    Mark{"/ray/", Runtime::kRay},
    Mark{"Ray cluster", Runtime::kRay},
};

constexpr std::array<std::string_view, kRuntimeCount> kNames = {
    "pytorch",   "torchrun",  "torch-spawn", "srun",     "jax", "maxtext",
    "deepspeed", "lightning", "huggingface", "megatron", "ray"};

}  // namespace

const char* const kRuntimeMarkExpression =
    R"(/torch/|torch\.(distributed|multiprocessing)|torchrun|ChildFailedError|Process(Raised|Exited)Exception|)"
    R"(srun: |slurmstepd: |/jax/|jaxlib|XlaRuntimeError|MaxText|maxtext|Config param |deepspeed|DeepSpeed|)"
    R"(pytorch_lightning|lightning/|lightning\.pytorch|/transformers/|huggingface_hub|/megatron/|Megatron|)"
    R"(ray\.exceptions\.|\(raylet\)|ray::|/ray/|Ray cluster)";

std::string_view ToString(Runtime runtime) { return kNames[static_cast<size_t>(runtime)]; }

std::vector<std::string> Names(RuntimeSet set) {
  std::vector<std::string> names;
  for (size_t r = 0; r < kRuntimeCount; ++r) {
    if (Has(set, static_cast<Runtime>(r))) names.emplace_back(kNames[r]);
  }
  return names;
}

RuntimeSet RuntimesNamedBy(std::string_view line) {
  RuntimeSet set = 0;
  for (const Mark& mark : kMarks) {
    if (line.find(mark.text) != line.npos) set |= Bit(mark.runtime);
  }
  return set;
}

Ecosystem EcosystemOf(RuntimeSet set) {
  // MaxText and JAX first: a JAX job's log can name torch (a data loader).
  if (Has(set, Runtime::kJax) || Has(set, Runtime::kMaxText)) return Ecosystem::kJax;
  for (Runtime r :
       {Runtime::kPyTorch, Runtime::kTorchrun, Runtime::kTorchSpawn, Runtime::kDeepSpeed,
        Runtime::kLightning, Runtime::kHuggingFace, Runtime::kMegatron}) {
    if (Has(set, r)) return Ecosystem::kPyTorch;
  }
  return Ecosystem::kUnknown;
}

}  // namespace jobmon::triage
