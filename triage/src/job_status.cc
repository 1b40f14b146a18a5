#include "jobmon/triage/job_status.h"

#include <fmt/format.h>

#include <charconv>

#include "jobmon/triage/triage.h"  // FormatDuration

namespace jobmon::triage {

const char* ToString(JobStatus status) {
  switch (status) {
    case JobStatus::kCompleted:
      return "completed";
    case JobStatus::kFailed:
      return "failed";
    case JobStatus::kCancelled:
      return "cancelled";
    case JobStatus::kRunning:
      return "running";
    case JobStatus::kHanging:
      return "hanging";
    case JobStatus::kUnknownDeath:
      return "unknown-death";
    case JobStatus::kUnknown:
      return "unknown";
  }
  return "?";
}

int ExitCodeFor(JobStatus status) {
  switch (status) {
    case JobStatus::kCompleted:
      return 0;
    case JobStatus::kRunning:
      return 3;
    case JobStatus::kHanging:
      return 4;
    case JobStatus::kFailed:
      return 5;
    case JobStatus::kCancelled:
      return 6;
    case JobStatus::kUnknownDeath:
      return 7;
    case JobStatus::kUnknown:
      return 8;
  }
  return 1;
}

int Severity(JobStatus status) {
  switch (status) {
    case JobStatus::kHanging:
      return 7;
    case JobStatus::kUnknownDeath:
      return 6;
    case JobStatus::kUnknown:
      return 5;
    case JobStatus::kFailed:
      return 4;
    case JobStatus::kCancelled:
      return 3;
    case JobStatus::kRunning:
      return 2;
    case JobStatus::kCompleted:
      return 1;
  }
  return 0;
}

SlurmState ClassifySlurmState(std::string_view state) {
  // Slurm's job_state_string() names (src/common/slurm_protocol_defs.c);
  // sacct appends " by UID" to CANCELLED and "+" to truncated names.
  auto is = [&](std::string_view name) {
    if (!state.starts_with(name)) return false;
    std::string_view rest = state.substr(name.size());
    return rest.empty() || rest.front() == ' ' || rest.front() == '+';
  };
  for (std::string_view alive :
       {"RUNNING", "PENDING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
        "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"}) {
    if (is(alive)) return SlurmState::kAlive;
  }
  if (is("COMPLETED")) return SlurmState::kCompleted;
  if (is("FAILED")) return SlurmState::kFailed;
  if (is("CANCELLED")) return SlurmState::kCancelled;
  if (is("TIMEOUT")) return SlurmState::kTimeout;
  if (is("NODE_FAIL")) return SlurmState::kNodeFail;
  if (is("OUT_OF_MEMORY")) return SlurmState::kOutOfMemory;
  if (is("PREEMPTED")) return SlurmState::kPreempted;
  if (is("BOOT_FAIL")) return SlurmState::kBootFail;
  if (is("DEADLINE")) return SlurmState::kDeadline;
  return SlurmState::kUnrecognised;
}

std::optional<SlurmExitCode> ParseSlurmExitCode(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view digits) -> std::optional<int> {
    int value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0 ||
        value > 255) {
      return std::nullopt;
    }
    return value;
  };
  auto status = number(text.substr(0, colon));
  auto signal = number(text.substr(colon + 1));
  if (!status || !signal) return std::nullopt;
  return SlurmExitCode{*status, *signal};
}

namespace {

std::string Silence(const StatusInputs& in) {
  return in.seconds_silent ? fmt::format("log silent for {}", FormatDuration(*in.seconds_silent))
                           : std::string("log silence unknown");
}

// The kernel's OOM kill (`--kernel-log`), when it is the root: "oom-host:
// the kernel's OOM killer killed X first; the log's signal-kill is its
// consequence".
std::string KernelOomKill(const StatusInputs& in, std::string_view first) {
  std::string text =
      fmt::format("oom-host: the kernel's OOM killer killed {}{}", in.kernel_oom_kill, first);
  if (!in.failure_class.empty() && in.failure_class != "oom-host")
    text += fmt::format("; the log's {} is its consequence", in.failure_class);
  return text;
}

// An alive job (RUNNING, PENDING, ...): steps decide between running and
// hanging; without recognised steps, say exactly that.
void Alive(const StatusInputs& in, const std::string& slurm, StatusDecision& d) {
  const std::string& state = in.slurm->state;
  if (state.starts_with("PENDING")) {
    d.status = JobStatus::kRunning;
    d.basis = slurm + ": the job has not started";
    return;
  }
  if (in.has_steps && in.steps_stalled) {
    d.status = JobStatus::kHanging;
    d.basis = fmt::format("{}, no step for {}", slurm,
                          FormatDuration(in.seconds_since_last_step.value_or(0)));
  } else if (in.has_steps && in.seconds_since_last_step) {
    d.status = JobStatus::kRunning;
    d.basis = fmt::format("{}, steps advancing (last step {} ago)", slurm,
                          FormatDuration(*in.seconds_since_last_step));
  } else if (in.has_steps) {
    d.status = JobStatus::kRunning;
    d.basis = fmt::format("{}, step lines without times: progress not measurable; {}", slurm,
                          Silence(in));
  } else {
    d.status = JobStatus::kRunning;
    d.basis = fmt::format("{}, no progress recognised (no step lines); {}", slurm, Silence(in));
  }
  if (!in.failure_class.empty() && !in.steps_after_failure) {
    d.findings.push_back(
        fmt::format("Slurm says {} but the log shows {}: a failed rank whose peers still wait?",
                    state, in.failure_class));
  }
}

// A clean end short of the plan after the program handled its time-limit
// warning signal (Slurm's --signal=USR1@SECONDS): the run checkpointed and
// stopped on purpose, and needs a resubmission to finish. Slurm calls the
// job COMPLETED; its training is a time-limit stop.
bool StoppedOnItsTimeLimitWarning(const StatusInputs& in) {
  return in.stopped_short && !in.time_limit_signal.empty();
}

void TimeLimitStop(const StatusInputs& in, const std::string& said, StatusDecision& d) {
  d.status = JobStatus::kCancelled;
  d.basis = fmt::format(
      "{}, but training stopped short of its planned steps after {}: a time-limit stop with a "
      "checkpoint; resubmit to finish",
      said, in.time_limit_signal);
  d.implied_class = "train-timeout";
}

// Slurm says the job ended. The class it implies is the primary only when
// the log names no cause of its own.
void Ended(const StatusInputs& in, SlurmState state, const std::string& slurm, bool failure,
           StatusDecision& d) {
  const auto& exit = in.slurm->exit_code;
  const std::string root = !failure ? std::string()
                           : !in.kernel_oom_kill.empty()
                               ? "; " + KernelOomKill(in, " first")
                               : fmt::format("; the log shows {} first", in.failure_class);
  switch (state) {
    case SlurmState::kCompleted:
      if (exit && (exit->status != 0 || exit->signal != 0)) {
        d.status = JobStatus::kFailed;
        d.basis = slurm + root;
        d.implied_class = exit->signal != 0 ? "signal-kill" : "subprocess-fail";
        return;
      }
      if (!failure && StoppedOnItsTimeLimitWarning(in)) {
        TimeLimitStop(in, slurm, d);
        return;
      }
      d.status = JobStatus::kCompleted;
      d.basis = slurm + (in.completion.empty() ? "" : "; the log: " + in.completion);
      if (failure) {
        d.findings.push_back(
            fmt::format("{} yet the log shows {} with no step after it: the batch script went on "
                        "past that failure; check the work really finished",
                        slurm, in.failure_class));
      }
      return;
    case SlurmState::kFailed:
      d.status = JobStatus::kFailed;
      if (failure) {
        d.basis = slurm + root;
      } else if (exit) {
        d.basis = slurm + "; the log names no cause";
        d.implied_class = exit->signal != 0 ? "signal-kill" : "subprocess-fail";
      } else if (!in.completion.empty()) {
        d.basis = slurm + " after the log's completion (" + in.completion + ")";
      } else {
        // Neither how (no exit code) nor why (nothing in the log).
        d.status = JobStatus::kUnknownDeath;
        d.basis = slurm + " without an exit code, and nothing in the log explains the end";
      }
      return;
    case SlurmState::kCancelled:
    case SlurmState::kPreempted:
    case SlurmState::kDeadline:
      d.status = JobStatus::kCancelled;
      d.basis = slurm + root;
      d.implied_class = "cancelled";
      return;
    case SlurmState::kTimeout:
      d.status = JobStatus::kCancelled;
      d.basis = slurm + ": the job ran into its time limit" + root;
      d.implied_class = "train-timeout";
      return;
    case SlurmState::kNodeFail:
    case SlurmState::kBootFail:
      d.status = JobStatus::kFailed;
      d.basis = slurm + ": a node of the job failed" + root;
      d.implied_class = "node-fail";
      return;
    case SlurmState::kOutOfMemory:
      d.status = JobStatus::kFailed;
      d.basis = slurm + ": the job's memory limit was hit" + root;
      d.implied_class = "oom-host";
      return;
    case SlurmState::kAlive:
    case SlurmState::kUnrecognised:
      return;
  }
}

// Without Slurm: the log's own evidence, and whether it still advances.
void LogAlone(const StatusInputs& in, bool failure, StatusDecision& d) {
  const std::string no_slurm =
      in.slurm ? "Slurm state " + in.slurm->state + " not recognised" : "Slurm state unavailable";
  const bool advancing = in.seconds_silent && *in.seconds_silent <= in.advancing_within_seconds;
  if (failure) {
    d.status = in.failure_class == "cancelled" ? JobStatus::kCancelled : JobStatus::kFailed;
    d.basis =
        in.kernel_oom_kill.empty()
            ? fmt::format("no JOB SUMMARY; the log ends in {} ({})", in.failure_class, no_slurm)
            : fmt::format("no JOB SUMMARY; {} ({})", KernelOomKill(in, ""), no_slurm);
    if (advancing) {
      d.findings.push_back(
          fmt::format("The log was written {} ago: if the job still runs, give its Slurm state",
                      FormatDuration(*in.seconds_silent)));
    }
  } else if (StoppedOnItsTimeLimitWarning(in)) {
    TimeLimitStop(in, fmt::format("no JOB SUMMARY ({})", no_slurm), d);
  } else if (!in.completion.empty()) {
    d.status = JobStatus::kCompleted;
    d.basis = fmt::format("no JOB SUMMARY; {} ({})", in.completion, no_slurm);
  } else if (in.has_steps && !in.abrupt_exit.empty()) {
    // After the last step the program ended without its own clean-up, and
    // said nothing of why: it was killed or died, it did not finish.
    d.status = JobStatus::kUnknownDeath;
    d.basis = fmt::format(
        "no JOB SUMMARY, no failure or completion; after the last step the runtime says the "
        "program ended without its clean-up ({}) ({})",
        in.abrupt_exit, no_slurm);
  } else if (in.has_steps && in.seconds_since_last_step && !in.steps_stalled) {
    d.status = JobStatus::kRunning;
    d.basis = fmt::format("no JOB SUMMARY, steps advancing ({})", no_slurm);
  } else if (in.has_steps && in.steps_stalled && advancing) {
    // Progress is judged by the steps where there are any: a log still
    // written (warnings, a peer's retries) whose steps stopped is a live
    // process that makes no progress, neither running nor dead.
    d.status = JobStatus::kHanging;
    d.basis = fmt::format("no JOB SUMMARY, no step for {} while the log is still written ({})",
                          FormatDuration(in.seconds_since_last_step.value_or(0)), no_slurm);
  } else if (advancing) {
    d.status = JobStatus::kRunning;
    d.basis = fmt::format("no JOB SUMMARY, log still advancing (last written {} ago){} ({})",
                          FormatDuration(*in.seconds_silent),
                          in.has_steps ? "" : ", no progress recognised", no_slurm);
  } else if (in.has_steps && in.steps_stalled && in.stopped_short) {
    // Training stopped short of its planned total and the log fell silent:
    // the positive evidence of an abrupt end the log alone can give.
    d.status = JobStatus::kUnknownDeath;
    d.basis = fmt::format(
        "no JOB SUMMARY, training stopped short of its planned steps; no step "
        "for {} ({})",
        FormatDuration(in.seconds_since_last_step.value_or(0)), no_slurm);
  } else {
    d.status = JobStatus::kUnknown;
    d.basis =
        fmt::format("no JOB SUMMARY, failure or completion in the log; {}{} ({}: ended or silent?)",
                    Silence(in), in.has_steps ? "" : ", no progress recognised", no_slurm);
  }
}

}  // namespace

StatusDecision DecideJobStatus(const StatusInputs& in) {
  StatusDecision d;
  d.progress_unrecognised = !in.has_steps;
  if (in.summary_exit) {
    int code = *in.summary_exit;
    d.status = code == 0                      ? JobStatus::kCompleted
               : (code == 130 || code == 143) ? JobStatus::kCancelled
                                              : JobStatus::kFailed;
    d.basis = fmt::format("JOB SUMMARY: exit {}", code);
    if (!in.kernel_oom_kill.empty()) d.basis += "; " + KernelOomKill(in, "");
    if (code == 0 && StoppedOnItsTimeLimitWarning(in)) TimeLimitStop(in, d.basis, d);
    return d;
  }
  const bool failure = !in.failure_class.empty() && !in.steps_after_failure;
  if (in.slurm) {
    SlurmState state = ClassifySlurmState(in.slurm->state);
    std::string slurm = "Slurm " + in.slurm->state;
    if (in.slurm->exit_code) {
      slurm += fmt::format(" {}:{}", in.slurm->exit_code->status, in.slurm->exit_code->signal);
    }
    if (state == SlurmState::kAlive) {
      Alive(in, slurm, d);
      return d;
    }
    if (state != SlurmState::kUnrecognised) {
      Ended(in, state, slurm, failure, d);
      return d;
    }
    d.findings.push_back("Slurm state " + in.slurm->state +
                         " is not one jobmon knows: the status comes from the log alone");
  }
  LogAlone(in, failure, d);
  return d;
}

}  // namespace jobmon::triage
