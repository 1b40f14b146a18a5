// Next steps: what the reader does next, from the primary and the status.

#include <fmt/format.h>

#include <algorithm>

#include "analysis.h"
#include "jobmon/triage/causal_chain.h"
#include "jobmon/triage/runtime.h"
#include "next_steps.h"

namespace jobmon::triage::analysis {

// Next steps: the primary class's from docs/triage.md's templates, or those
// of a finished, running or unknown job, with the job id filled in.
void SuggestNextSteps(const ScanFacts& facts, TriageReport& r, const Analysis& a) {
  const std::string& primary = a.primary;
  if (const FailureClass* primary_class = FindClass(primary))
    r.next_steps = primary_class->next_steps;
  if (std::vector<std::string> fitted = RuntimeNextSteps(primary, facts.runtimes); !fitted.empty())
    r.next_steps = std::move(fitted);
  // Where to start: the rank of the chain's primary. A traceback names no
  // rank; the launcher's end of the same process (srun's task exit, a
  // failure the primary explains) does.
  if (r.chain.primary) {
    const CausalEvent& first = r.chain.events[*r.chain.primary];
    std::string rank = first.rank, host = first.host;
    bool explains_another = false;
    for (const CausalLink& link : r.chain.links) {
      if (link.cause != r.chain.primary) continue;
      explains_another = true;
      const CausalEvent& effect = r.chain.events[link.effect];
      if (rank.empty() && effect.kind != EventKind::kConsequence && !effect.rank.empty()) {
        rank = effect.rank;
        if (host.empty()) host = effect.host;
      }
    }
    // torch.multiprocessing.spawn reports the process that failed first by
    // its index, which scripts pass as the rank.
    if (rank.empty() && facts.spawn_failed_process)
      rank = std::to_string(*facts.spawn_failed_process);
    if (first.line && !rank.empty())
      r.next_steps.insert(r.next_steps.begin(),
                          FirstFailureStep(rank, host, *first.line, explains_another));
  }
  if (primary == "none" && r.status == JobStatus::kCompleted) r.next_steps = {"No action needed."};
  if (primary == "none" && r.status == JobStatus::kRunning) {
    r.next_steps = {"Keep watching: `jobmon watch <job>` or let slurm_job_monitor follow it."};
  }
  if (primary == "train-timeout" && !a.in.time_limit_signal.empty() &&
      a.decision.implied_class == "train-timeout") {
    const Progress& p = r.progress;
    std::optional<double> left;
    if (p.steady_step_seconds && p.total_steps && p.last_step)
      left = *p.steady_step_seconds *
             static_cast<double>(std::max<int64_t>(0, *p.total_steps - 1 - *p.last_step));
    r.next_steps = {
        "Resubmit the job to resume from its checkpoint (the same batch script), or let it requeue "
        "itself on the warning: `scontrol requeue $SLURM_JOB_ID` in its handler, Lightning's "
        "SLURMEnvironment(auto_requeue=True), submitit's checkpointing.",
        fmt::format("To finish in one allocation, ask for more time (`--time`){}.",
                    left ? fmt::format(": at its pace the remaining steps take about {}",
                                       FormatDuration(*left))
                         : "")};
  }
  if (primary == "none" && a.decision.progress_unrecognised &&
      (r.status == JobStatus::kRunning || r.status == JobStatus::kUnknown)) {
    r.next_steps.push_back(
        "Tell jobmon the step line: `--step-regex '(?P<step>\\d+)...'` or [triage] step_regex in "
        "jobmon.toml.");
  }
  if (r.status == JobStatus::kUnknown) {
    r.next_steps.insert(r.next_steps.begin(),
                        "Give Slurm's view: run where `squeue` answers, or pass `--slurm-state "
                        "STATE --slurm-exit-code A:B` (from `scontrol show job <job>` or sacct).");
  }
  if (r.heartbeat && primary != "heartbeat-timeout") {
    r.next_steps.push_back(
        "A heartbeat timeout followed; see the checklist (likely a consequence).");
  }
  if (r.job_id) {
    for (std::string& step : r.next_steps) {
      for (std::string placeholder : {"<job>", "<id>"}) {
        for (size_t pos = step.find(placeholder); pos != std::string::npos;
             pos = step.find(placeholder, pos + r.job_id->size())) {
          step.replace(pos, placeholder.size(), *r.job_id);
        }
      }
    }
  }
}

}  // namespace jobmon::triage::analysis
