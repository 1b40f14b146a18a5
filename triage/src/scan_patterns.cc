#include "scan_patterns.h"

#include <hs/hs.h>

#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/signatures.h"
#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {

std::vector<PatternDef> AllPatterns() {
  std::vector<PatternDef> out;
  const auto& classes = FailureClasses();
  for (size_t i = 0; i < classes.size(); ++i) {
    for (const Signature& p : classes[i].patterns) {
      out.push_back({p.expression, HS_FLAG_MULTILINE, Kind::kClass, static_cast<int>(i),
                     WeightOf(classes[i], p), p.source});
    }
  }
  for (const std::string& p : HarmlessPatterns()) out.push_back({p, 0, Kind::kHarmless, 0});
  auto step = [&](const char* p, StepProfile profile, unsigned flags = 0) {
    out.push_back({p, flags, Kind::kStep, static_cast<int>(profile)});
  };
  // Prefilters only: the parsers in step_lines.cc decide (and name their sources).
  step(R"(completed step: \d)", StepProfile::kMaxText);
  step(R"(iteration[ \t]+\d+/[ \t]*\d+[ \t]*\|)", StepProfile::kMegatron);
  step(R"(step:[ \t]+\d+[ \t]+(\x1b\[\d+m)?loss:)", StepProfile::kTorchTitan);
  step(R"(\d+/\d+ \[[0-9:]+<[0-9:?]+,[ \t]*[0-9.]+(s/it|it/s)[,\]])", StepProfile::kHuggingFace);
  step(R"(Epoch \d+[: ])", StepProfile::kLightning);
  step(R"(steps: \d+ loss: )", StepProfile::kDeepSpeed);
  step(R"(step=\d+, skipped=)", StepProfile::kDeepSpeed);
  step(R"(logging_writer\.py:\d+\] \[\d+\])", StepProfile::kT5x);
  step(R"((^|[^A-Za-z0-9_])(step|iteration|iter)[ \t:=#]{1,3}\d)", StepProfile::kGeneric,
       HS_FLAG_CASELESS | HS_FLAG_MULTILINE);
  auto fact = [&](const char* p, Fact f, unsigned flags = 0) {
    out.push_back({p, flags, Kind::kFact, static_cast<int>(f)});
  };
  fact(R"(JOB SUMMARY)", Fact::kSummary);
  fact(R"(Status: SUCCESS \(exit 0\))", Fact::kStatusSuccess);
  fact(R"(Status: FAILED \(exit \d)", Fact::kStatusFailed);
  fact(R"(NODE_EXIT host=\S+ exit=\d)", Fact::kNodeExit);
  fact(R"(PASSTHROUGH_ARGS=)", Fact::kPassthrough);
  fact(R"(Config param checkpoint_period: \d)", Fact::kCheckpointPeriod);
  fact(R"(^(\d+: )?NNODES=\d)", Fact::kNnodes, HS_FLAG_MULTILINE);
  fact(R"(^(\d+: )?NODE_LIST=\S)", Fact::kNodeList, HS_FLAG_MULTILINE);
  fact(R"(SLURM_JOB_ID=\d)", Fact::kJobId);
  fact(R"(/job:jax_worker/replica:\d+/task:\d)", Fact::kAccusedTask);
  fact(R"(\[fake-trainer\] task \d+ on host \S)", Fact::kTaskHostFake);
  fact(R"(process_id=\d+ num_processes=\d+ host=\S)", Fact::kTaskHostJax);
  fact(R"(Polled error from coordination service)", Fact::kSelfDeath);
  fact(R"(Terminating process because the JAX distributed service detected fatal errors)",
       Fact::kSelfDeath);
  fact(R"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)", Fact::kIsoTimestamp);
  fact(R"(^(\d+: )?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} )", Fact::kAbslTimestamp, HS_FLAG_MULTILINE);
  fact(R"(ssh -[LJ] )", Fact::kTunnel);
  fact(R"(\[Prometheus\] Started on port \d)", Fact::kPrometheusPort);
  fact(R"(restoring from this run's directory step \d)", Fact::kRestore);
  fact(R"(No existing checkpoints found)", Fact::kFreshStart);
  fact(R"(srun: error: \S+: task \d+: (Killed|Segmentation fault|Aborted))", Fact::kTaskKilled);
  // Frameworks' own "training finished" lines (docs/signature-sources.md):
  // HF Trainer logs speed_metrics("train", ...) once, after the loop
  // (transformers src/transformers/trainer.py `_inner_training_loop`;
  // trainer_utils.py speed_metrics puts "train_runtime" first; printed by
  // trainer_callback.py ProgressCallback/PrinterCallback.on_log as
  // str(dict); newer releases quote the numbers), v4.x. Lightning >= 1.7 (ae98031),
  // loops/fit_loop.py `done`: rank_zero_info(f"`Trainer.fit` stopped: `max_steps={...!r}`
  // reached.") and the same for max_epochs.
  fact(R"(\{'train_runtime': '?[0-9])", Fact::kCompletion);
  fact(R"(`Trainer\.fit` stopped: `max_(steps|epochs)=\d+` reached\.)", Fact::kCompletion);
  // Slurm ending the job or step (slurmstepd req.c, 22.05..HEAD): what
  // follows is teardown.
  fact(R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT )", Fact::kSlurmEnd);
  fact(kPythonExceptionLine, Fact::kExceptionLine, HS_FLAG_MULTILINE);
  // srun's per-task end (src/srun/launch.c _task_finish, 22.05..HEAD).
  fact(R"(srun: error: \S+: tasks? [0-9,-]+: )", Fact::kTaskExit);
  return out;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kClass:
      return "class";
    case Kind::kHarmless:
      return "harmless";
    case Kind::kStep:
      return "step";
    case Kind::kFact:
      return "fact";
  }
  return "?";
}

std::vector<ScanPattern> ScanPatterns() {
  std::vector<ScanPattern> out;
  for (const PatternDef& def : AllPatterns()) {
    std::string name = def.kind == Kind::kClass  ? FailureClasses()[static_cast<size_t>(def.arg)].id
                       : def.kind == Kind::kStep ? ToString(static_cast<StepProfile>(def.arg))
                                                 : "";
    out.push_back({KindName(def.kind), name, def.expression,
                   def.kind == Kind::kClass ? ToString(def.weight) : "", def.source});
  }
  return out;
}

}  // namespace jobmon::triage
