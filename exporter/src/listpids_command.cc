// Runs `scontrol listpids` under a deadline and keeps its answer a while.
#include "jobmon/exporter/listpids_command.h"

#include <cstdlib>

#include "jobmon/common/run_command.h"

namespace jobmon::exporter {

const ListPidsAnswer& ListPidsCommand::Get() {
  const auto now = std::chrono::steady_clock::now();
  if (!next_run_ || now >= *next_run_) {
    last_ = Run();
    const bool failed = !last_.problem.empty();
    next_run_ = std::chrono::steady_clock::now() +
                (failed ? options_.retry_after_failure : options_.fresh_for);
  }
  return last_;
}

ListPidsAnswer ListPidsCommand::Run() {
  ++runs_;
  ListPidsAnswer answer;
  std::vector<std::string> argv = {options_.scontrol, "listpids", options_.job_id};
  if (!options_.node.empty()) argv.push_back(options_.node);
  CommandOptions run;
  run.timeout = options_.timeout;
  run.max_output = options_.max_output;
  // Only what scontrol needs from us: where Slurm's configuration is. The
  // exporter's PATH finds it by name (the prolog's daemons get a fixed one).
  const char* path = std::getenv("PATH");
  run.env = std::vector<std::string>{std::string("PATH=") +
                                     (path ? path : "/usr/sbin:/usr/bin:/sbin:/bin")};
  if (!options_.slurm_conf.empty()) run.env->push_back("SLURM_CONF=" + options_.slurm_conf);
  auto result = RunCommand(argv, run);
  const std::string what = options_.scontrol + " listpids";
  if (!result) {
    answer.problem = what + ": " + result.error().message;
    return answer;
  }
  if (result->timed_out) {
    answer.problem = what + ": no answer within " + std::to_string(options_.timeout.count()) + "ms";
    return answer;
  }
  // 126/127: the shell's convention, and RunCommand's child for a program
  // it could not execute.
  if (result->exit_code < 0 || result->exit_code == 126 || result->exit_code == 127) {
    answer.problem = what + (result->exit_code < 0 ? ": killed by a signal" : ": cannot be run");
    return answer;
  }
  std::string& out = result.value().output;
  if (out.size() >= options_.max_output)
    out.resize(out.rfind('\n') + 1);  // whole rows (npos + 1: none)
  auto rows = ParseListPids(out, options_.job_id);
  // A failed run that still printed rows: some steps answered, another did
  // not. One without rows: no step of the job here (25.11 prints nothing,
  // 22.05 the header alone), or an error Slurm said on stderr.
  if (result->exit_code != 0 && (!rows || rows->empty())) return answer;
  if (!rows) {
    answer.problem = what + ": " + rows.error().message;
    return answer;
  }
  answer.rows = std::move(rows).value();
  return answer;
}

}  // namespace jobmon::exporter
