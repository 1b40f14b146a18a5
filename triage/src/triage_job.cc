#include "jobmon/triage/triage_job.h"

#include "jobmon/triage/job_input.h"

namespace jobmon::triage {

TriageReport TriageJob(const ScanFacts& facts, const JobContext& job) {
  AnalysisContext context = job.analysis;
  if (job.job_id) context.job_id = job.job_id;
  if (job.slurm_state || job.slurm_exit_code) {
    context.slurm_state = job.slurm_state;
    context.slurm_exit_code = job.slurm_exit_code;
  } else if (job.ask_slurm) {
    if (auto id = job.job_id ? job.job_id : facts.job_id) {
      if (auto view = QuerySlurmJobState(*id)) {
        context.slurm_state = view->state;
        context.slurm_exit_code = view->exit_code;
      }
    }
  }
  TriageReport report = Analyze(facts, context);
  report.log_path = job.log_path;
  report.job_dir = job.job_dir;
  if (job.job_id) report.job_id = job.job_id;
  return report;
}

}  // namespace jobmon::triage
