#include "jobmon/triage/line_facts.h"

#include <re2/re2.h>

#include <cctype>
#include <charconv>

#include "jobmon/triage/runtime.h"
#include "jobmon/triage/signatures.h"
#include "line_fact_patterns.h"

namespace jobmon::triage {

// Sources of the wordings: the reference job script's header and JOB
// SUMMARY (docs/triage.md; contrib/fake-trainer's
// log_lines.cc prints the same lines), MaxText's pyconfig ("Config param
// <key>: <value>") and checkpointing messages, the JAX/XLA coordination
// service (docs/signature-sources.md section 6), Slurm's srun.
const std::vector<FactPattern>& FactPatterns() {
  static const std::vector<FactPattern> patterns = {
      {R"(JOB SUMMARY)", false, Fact::kSummary},
      {R"(Status: SUCCESS \(exit 0\))", false, Fact::kStatusSuccess},
      {R"(Status: FAILED \(exit \d)", false, Fact::kStatusFailed},
      {R"(NODE_EXIT host=\S+ exit=\d)", false, Fact::kNodeExit},
      {R"(PASSTHROUGH_ARGS=)", false, Fact::kPassthrough},
      {R"(Config param checkpoint_period: \d)", false, Fact::kCheckpointPeriod},
      {R"(^(\d+: )?NNODES=\d)", true, Fact::kNnodes},
      {R"(^(\d+: )?NODE_LIST=\S)", true, Fact::kNodeList},
      {R"(SLURM_JOB_ID=\d)", false, Fact::kJobId},
      {R"(/job:jax_worker/replica:\d+/task:\d)", false, Fact::kAccusedTask},
      {R"(\[fake-trainer\] task \d+ on host \S)", false, Fact::kTaskHostFake},
      {R"(process_id=\d+ num_processes=\d+ host=\S)", false, Fact::kTaskHostJax},
      // The accused task's own report of the coordination service's error.
      {R"(Polled error from coordination service)", false, Fact::kSelfDeath},
      {R"(Terminating process because the JAX distributed service detected fatal errors)", false,
       Fact::kSelfDeath},
      {R"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)",
       false,
       Fact::kIsoTimestamp,
       {},
       nullptr,
       IsoStampInLine},
      {R"(^(\d+: )?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} )",
       true,
       Fact::kYearlessTimestamp,
       {},
       AbslStampStartsLine},
      {R"(^(\d+: )?(\x1b\[[0-9;]{1,6}m)?\[\d\d/\d\d \d\d:\d\d:\d\d[ \]])",
       true,
       Fact::kYearlessTimestamp,
       {},
       BracketStampStartsLine},
      {R"(ssh -[LJ] )", false, Fact::kTunnel},
      {R"(\[Prometheus\] Started on port \d)", false, Fact::kPrometheusPort},
      {R"(restoring from this run's directory step \d)", false, Fact::kRestore},
      {R"(No existing checkpoints found)", false, Fact::kFreshStart},
      {R"(jax_distributed_heartbeat_timeout_seconds=\d)", false, Fact::kHeartbeatTimeout},
      {R"(srun: error: \S+: task \d+: (Killed|Segmentation fault|Aborted))", false,
       Fact::kTaskKilled},
      // Frameworks' own "training finished" lines (docs/signature-sources.md):
      // HF Trainer logs speed_metrics("train", ...) once, after the loop
      // (transformers src/transformers/trainer.py `_inner_training_loop`;
      // trainer_utils.py speed_metrics puts "train_runtime" first; printed by
      // trainer_callback.py ProgressCallback/PrinterCallback.on_log as
      // str(dict); newer releases quote the numbers), v4.x. Lightning >= 1.7 (ae98031),
      // loops/fit_loop.py `done`: rank_zero_info(f"`Trainer.fit` stopped: `max_steps={...!r}`
      // reached.") and the same for max_epochs.
      {R"(\{'train_runtime': '?[0-9])", false, Fact::kCompletion},
      {R"(`Trainer\.fit` stopped: `max_(steps|epochs)=\d+` reached\.)", false, Fact::kCompletion},
      // HF Trainer, after the training loop (transformers trainer.py
      // _inner_training_loop logger.info, 4.x; idx: stored copies 2021..2025;
      // shown at info verbosity, as the example scripts set it).
      {R"(Training completed\. Do not forget to share your model)", false, Fact::kCompletion},
      // Megatron-LM's planned ends (megatron/training/training.py
      // print_datetime, a31833c 2020-12..HEAD; git): the loop finished, or
      // --exit-duration-in-mins / --exit-interval stopped it on purpose.
      {R"(\[(after training is done|exiting program after [0-9.]+ minutes|exiting program at iteration \d+)\] datetime: )",
       false, Fact::kCompletion},
      // Slurm ending the job or step (slurmstepd req.c, 22.05..HEAD): what
      // follows is teardown.
      {R"(\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT )", false, Fact::kSlurmEnd},
      // The exception line that ends a Python traceback (signatures.cc names
      // its source; the traceback signature weighs on it).
      {kPythonExceptionLine, true, Fact::kExceptionLine},
      // srun's per-task end (src/srun/launch.c _task_finish, 22.05..HEAD).
      {R"(srun: error: \S+: tasks? [0-9,-]+: )", false, Fact::kTaskExit},
      // torchrun's ChildFailedError summary (pytorch/pytorch
      // torch/distributed/elastic/multiprocessing/errors/__init__.py
      // ChildFailedError.format_msg / _format_failure, 1.9..2.x; verified
      // 1.13.1 and tests/fixtures/real/pytorch): the block the launcher
      // calls the root, and its rank / exitcode / traceback fields.
      {R"(Root Cause \(first observed failure\):)", false, Fact::kLauncherRootCause},
      {R"(^  (rank|exitcode|traceback) *: \S)", true, Fact::kLauncherField},
      // Planned totals printed before the loop (ParsePlannedTotal):
      // transformers trainer.py _inner_training_loop logger.info("  Total
      // optimization steps = {max_steps:,}") (older 4.x and the accelerate
      // no_trainer examples without the separators); MaxText pyconfig's
      // "Config param %s: %s" for every key; Megatron-LM
      // megatron/training/training.py print_rank_0(f'setting training
      // iterations to {args.train_iters}'); torchtitan trainer.py "... total
      // steps {config.training.steps} (warmup {W})" (before 3c77e9fa2,
      // 2024-07: "total steps: {N}({W})").
      {R"(Total optimization steps = \d)", false, Fact::kPlannedTotal},
      {R"(Config param steps: \d)", false, Fact::kPlannedTotal},
      {R"(setting training iterations to \d)", false, Fact::kPlannedTotal},
      {R"(total steps:? \d+ ?\(\d*)", false, Fact::kPlannedTotal},
      // A program's own name for its planned total, as an option, a config
      // key or a JSON field: --max-steps 40, max_steps=40, "max_steps": 40
      // (HF TrainingArguments max_steps, Lightning Trainer(max_steps=),
      // nanoGPT max_iters, Megatron --train-iters, torchtitan training.steps
      // as total_steps in some forks; the first one printed counts).
      {R"((?i)\b(max|total|num|train)[_-](steps|iters)["']?(\s?[=:]\s?|\s)\d)", false,
       Fact::kPlannedTotal},
      // A time-limit warning signal handled: the run checkpoints and stops
      // on purpose, short of its plan (Slurm's --signal=USR1@SECONDS).
      // Lightning trainer/connectors/signal_connector.py
      // _slurm_sigusr_handler_fn rank_zero_info("handling auto-requeue
      // signal") (1.x; "Handling auto-requeue signal: {signum}" later);
      // submitit core/job_environment.py SignalHandler.has_timed_out "Job has
      // timed out. Ran {} minutes out of requested {} minutes."; Megatron-LM
      // training.py "exiting program after receiving SIGTERM."; and a
      // program's own word that it received or handled SIGUSR1/SIGUSR2.
      // A traceback frame inside a model or checkpoint loader: an exception
      // raised there is a load failure whatever its wording (torch 1.13 words
      // a truncated checkpoint only `OSError: [Errno 22] Invalid argument`).
      // pytorch torch/serialization.py (load, _load, _legacy_load; not
      // save, whose failures are the disk's), safetensors
      // bindings/python/py_src/safetensors/torch.py (load_file, load),
      // transformers src/transformers/modeling_utils.py load_state_dict,
      // torch/nn/modules/module.py Module.load_state_dict (a checkpoint
      // whose keys or shapes are not the model's).
      {R"(File "[^"]*/torch/serialization\.py", line \d+, in (load|_load|_legacy_load)\b)", false,
       Fact::kLoaderFrame},
      {R"(File "[^"]*/safetensors/torch\.py", line \d+, in (load_file|load)\b)", false,
       Fact::kLoaderFrame},
      {R"(File "[^"]*/transformers/modeling_utils\.py", line \d+, in load_state_dict\b)", false,
       Fact::kLoaderFrame},
      {R"(File "[^"]*/torch/nn/modules/module\.py", line \d+, in load_state_dict\b)", false,
       Fact::kLoaderFrame},
      // torch.hub's download of pretrained weights (torch/hub.py
      // load_state_dict_from_url, download_url_to_file, load), 1.x..HEAD.
      {R"(File "[^"]*/torch/hub\.py", line \d+, in (load_state_dict_from_url|download_url_to_file|load)\b)",
       false, Fact::kLoaderFrame},
      {R"([Hh]andling auto-requeue signal)", false, Fact::kTimeLimitSignal},
      {R"(Job has timed out\. Ran \d+ minutes out of requested \d+ minutes)", false,
       Fact::kTimeLimitSignal},
      {R"(exiting program after receiving SIGTERM)", false, Fact::kTimeLimitSignal},
      {R"((?i)\b(received|receiving|caught|got|handling|handled)\b[^\n]{0,40}\bSIGUSR[12]\b)",
       false, Fact::kTimeLimitSignal},
      // The runtime's word, at the program's end, that it ended without its
      // own clean-up (docs/signature-sources.md, "Abrupt ends").
      {R"(resource_tracker: There appear to be \d+ leaked \w+ objects to clean up at shutdown)",
       false, Fact::kAbruptExit},
      // Framework and launcher names (runtime.h, for next steps).
      {kRuntimeMarkExpression, false, Fact::kRuntimeMark},
      // Times printed as the program's clock gives them: unix seconds
      // (time.time(), after a time key or first on the line) and the time
      // of day alone (logging's datefmt "%H:%M:%S"), dated by an earlier
      // line's date (step_lines.h ParseEpochStamp, ParseClockStamp).
      // Matched as its two alternatives: one expression starting with an
      // alternation of an anchor and words made Hyperscan try it at every
      // character, a seventh of its time on a training log
      // (tests/bench/triage_bench.py). The line-start one, and the clock,
      // are read in the walk over lines (line_walk_patterns.h).
      {R"((^(\d+: )?|\b(ts|time|timestamp|wall|wall_time|unix_time|time_unix)["']?\s?[=:]\s?)1[5-9]\d{8}(\.\d+)?\b)",
       true,
       Fact::kEpochStamp,
       {R"(\b(ts|time|timestamp|wall|wall_time|unix_time|time_unix)["']?\s?[=:]\s?1[5-9]\d{8}(\.\d+)?\b)"},
       EpochSecondsStartLine},
      {R"(^(\d+: )?\[?\d\d:\d\d:\d\d([.,]\d{1,6})?\]?\s)",
       true,
       Fact::kClockStamp,
       {},
       ClockStartsLine},
      // faulthandler's dump of every thread (cpython Python/traceback.c
      // _Py_DumpTracebackThreads: "Current thread 0x%016lx (most recent call
      // first):" / "Thread 0x..."), 3.x: after "Fatal Python error: " it is
      // a crash's; alone, a dump asked of a live process (faulthandler.register
      // on a signal) or its watchdog's.
      {R"(^(\d+: )?(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):)", true,
       Fact::kStackDump},
      {R"(Fatal Python error: )", false, Fact::kFatalPythonError},
      // pytorch torch/multiprocessing/spawn.py ProcessContext.join, 1.x..HEAD:
      // "-- Process %d terminated with the following error:\n" and
      // ProcessExitedException's "process %d terminated with exit code %d" /
      // "... with signal %s" (verified 1.13.1: tests/fixtures/real/pytorch).
      {R"(-- Process \d+ terminated with the following error:|process \d+ terminated with (exit code|signal) )",
       false, Fact::kSpawnFailedProcess},
      // A checkpoint save in the frameworks' words (phase_lines.h
      // CheckpointSaveOf decides; docs/signature-sources.md, "Phases").
      {R"((?i)checkpoint|ckpt|\bsav(e|ed|ing)\b)", false, Fact::kCheckpointWord},
  };
  return patterns;
}

namespace {

template <typename Int>
std::optional<Int> IntAfter(std::string_view line, std::string_view key) {
  size_t pos = line.find(key);
  if (pos == line.npos) return std::nullopt;
  std::string_view rest = line.substr(pos + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc()) return std::nullopt;
  return static_cast<Int>(value);
}

// The token after `key` up to a blank or ')'; nullopt without the key.
std::optional<std::string_view> TokenAfter(std::string_view line, std::string_view key) {
  size_t pos = line.find(key);
  if (pos == line.npos) return std::nullopt;
  std::string_view rest = line.substr(pos + key.size());
  return rest.substr(0, rest.find_first_of(" \t\r\n)"));
}

bool Contains(std::string_view line, std::string_view text) { return line.find(text) != line.npos; }

}  // namespace

std::optional<int> ParseFailedStatus(std::string_view line) {
  return IntAfter<int>(line, "Status: FAILED (exit ");
}

std::optional<NodeExitLine> ParseNodeExit(std::string_view line) {
  auto host = TokenAfter(line, "NODE_EXIT host=");
  if (!host) return std::nullopt;
  auto code = IntAfter<int>(line, " exit=");
  if (!code) return std::nullopt;
  return NodeExitLine{*host, *code};
}

std::optional<PassthroughArgs> ParsePassthroughArgs(std::string_view line) {
  if (!Contains(line, "PASSTHROUGH_ARGS=")) return std::nullopt;
  PassthroughArgs args;
  for (size_t pos = line.find("steps="); pos != line.npos; pos = line.find("steps=", pos + 1)) {
    if (pos > 0 && line[pos - 1] != ' ' && line[pos - 1] != '=') continue;
    if (auto steps = IntAfter<int64_t>(line.substr(pos), "steps=")) {
      args.total_steps = *steps;
      break;
    }
  }
  if (auto value = TokenAfter(line, "enable_checkpointing=")) {
    args.checkpointing = *value == "true" || *value == "True" || *value == "1";
  }
  return args;
}

std::optional<int64_t> ParseCheckpointPeriod(std::string_view line) {
  auto period = IntAfter<int64_t>(line, "Config param checkpoint_period:");
  if (!period || *period <= 0) return std::nullopt;
  return period;
}

std::optional<double> ParseHeartbeatTimeout(std::string_view line) {
  constexpr std::string_view kKey = "jax_distributed_heartbeat_timeout_seconds=";
  size_t at = line.find(kKey);
  if (at == line.npos) return std::nullopt;
  std::string_view rest = line.substr(at + kKey.size());
  double seconds = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), seconds);
  if (ec != std::errc() || !(seconds > 0)) return std::nullopt;
  return seconds;
}

bool IsHeartbeatAccusation(std::string_view line) {
  // The heartbeat-timeout class's own wordings (signatures.cc), as one
  // expression: the recogniser and the scanner cannot disagree on them.
  static const RE2 accusation = [] {
    std::string any;
    for (const Signature& s : HeartbeatAccusations())
      any += (any.empty() ? "(?:" : "|(?:") + s.expression + ")";
    return any;
  }();
  return RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), accusation);
}

std::vector<int> ParseAccusedTasks(std::string_view line) {
  std::vector<int> tasks;
  if (!Contains(line, "/job:jax_worker/replica:")) return tasks;
  for (size_t pos = line.find("/task:"); pos != line.npos; pos = line.find("/task:", pos + 1)) {
    if (auto task = IntAfter<int>(line.substr(pos), "/task:")) tasks.push_back(*task);
  }
  return tasks;
}

std::optional<int> ParseNnodes(std::string_view line) {
  std::string_view text = WithoutTaskLabel(line);
  if (!text.starts_with("NNODES=")) return std::nullopt;
  return IntAfter<int>(text, "NNODES=");
}

std::optional<std::string_view> ParseNodeList(std::string_view line) {
  std::string_view text = WithoutTaskLabel(line);
  if (!text.starts_with("NODE_LIST=")) return std::nullopt;
  return TokenAfter(text, "NODE_LIST=");
}

std::optional<std::string_view> ParseHeaderJobId(std::string_view line) {
  return TokenAfter(line, "SLURM_JOB_ID=");
}

std::optional<TaskHost> ParseFakeTrainerTaskHost(std::string_view line) {
  auto task = IntAfter<int>(line, "[fake-trainer] task ");
  auto host = TokenAfter(line, " on host ");
  if (!task || !host || host->empty()) return std::nullopt;
  return TaskHost{*task, *host};
}

std::optional<TaskHost> ParseJaxTaskHost(std::string_view line) {
  auto task = IntAfter<int>(line, "process_id=");
  auto host = TokenAfter(line, " host=");
  if (!task || !host || host->empty()) return std::nullopt;
  return TaskHost{*task, *host};
}

std::optional<int> TaskOf(std::string_view line) {
  if (auto label = TaskLabel(line)) return label;
  return IntAfter<int>(line, "(task ");
}

std::optional<int> ParsePrometheusPort(std::string_view line) {
  return IntAfter<int>(line, "[Prometheus] Started on port");
}

std::optional<int64_t> ParseRestoreStep(std::string_view line) {
  return IntAfter<int64_t>(line, "restoring from this run's directory step");
}

std::optional<int64_t> ParsePlannedTotal(std::string_view line) {
  for (std::string_view key :
       {"Total optimization steps = ", "Config param steps: ", "setting training iterations to ",
        "total steps: ", "total steps "}) {
    size_t pos = line.find(key);
    if (pos == line.npos) continue;
    // "1,000": thousands separators, as transformers prints them.
    int64_t total = 0;
    bool digits = false;
    for (char c : line.substr(pos + key.size())) {
      if (c >= '0' && c <= '9') {
        if (total > (INT64_MAX - 9) / 10) return std::nullopt;
        total = total * 10 + (c - '0');
        digits = true;
      } else if (c != ',' || !digits) {
        break;
      }
    }
    if (digits && total > 0) return total;
  }
  // max_steps=N and its kin (FactPatterns()): the key, then a quote, `=`
  // or `:`, spaces, the number.
  std::string lower(line);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view first : {"max", "total", "num", "train"}) {
    for (size_t pos = lower.find(first); pos != lower.npos; pos = lower.find(first, pos + 1)) {
      if (pos > 0 &&
          (std::isalnum(static_cast<unsigned char>(lower[pos - 1])) || lower[pos - 1] == '_'))
        continue;
      size_t i = pos + first.size();
      if (i >= lower.size() || (lower[i] != '_' && lower[i] != '-')) continue;
      std::string_view rest = std::string_view(lower).substr(i + 1);
      size_t key = rest.starts_with("steps") ? 5 : rest.starts_with("iters") ? 5 : 0;
      if (key == 0) continue;
      i += 1 + key;
      if (i < lower.size() && (lower[i] == '"' || lower[i] == '\'')) ++i;
      while (i < lower.size() && lower[i] == ' ') ++i;
      if (i < lower.size() && (lower[i] == '=' || lower[i] == ':')) ++i;
      while (i < lower.size() && lower[i] == ' ') ++i;
      int64_t total = 0;
      auto [end, ec] = std::from_chars(lower.data() + i, lower.data() + lower.size(), total);
      if (ec == std::errc() && end != lower.data() + i && total > 0) return total;
    }
  }
  return std::nullopt;
}

std::optional<int> ParseKilledTask(std::string_view line) {
  size_t at = line.find("srun: error: ");
  if (at == line.npos) return std::nullopt;
  return IntAfter<int>(line.substr(at), ": task ");
}

std::optional<int> ParseSpawnFailedProcess(std::string_view line) {
  if (auto n = IntAfter<int>(line, "-- Process ")) return n;
  size_t at = line.find("process ");
  if (at == line.npos || line.find(" terminated with ", at) == line.npos) return std::nullopt;
  return IntAfter<int>(line.substr(at), "process ");
}

std::optional<int> ParseTaskExit(std::string_view line) {
  if (!Contains(line, "srun: error: ")) return std::nullopt;
  return IntAfter<int>(line, ": task ");
}

LineFacts RecogniseLine(std::string_view line, const LineContext& context) {
  LineFacts facts;
  std::string_view text = WithoutTaskLabel(line);
  if (IsHeartbeatAccusation(text)) {
    facts.heartbeat_accusation = true;
    facts.line_time = ParseYearlessTimestamp(text, context.year);
  }
  facts.heartbeat_timeout = ParseHeartbeatTimeout(text);
  facts.checkpoint_period = ParseCheckpointPeriod(text);
  facts.passthrough = ParsePassthroughArgs(text);
  facts.restore_step = ParseRestoreStep(text);
  facts.job_id = ParseHeaderJobId(text);
  // A configuration line is not a step line, whatever it contains.
  if (facts.heartbeat_timeout || facts.checkpoint_period) return facts;
  if (context.profile) {
    if (auto sample = ParseStep(*context.profile, text)) {
      facts.step = DetectedStep{*context.profile, *sample};
    }
  } else {
    facts.step = DetectStep(text);
  }
  // The step line's own time, where it carries one (ISO or absl stamp): a
  // follower dates lines only to its poll, a backlog all to one moment.
  if (facts.step && !facts.step->sample.timestamp) {
    auto& stamp = facts.step->sample.timestamp;
    stamp = FindIsoTimestamp(text);
    if (!stamp) stamp = ParseYearlessTimestamp(text, context.year);
    if (!stamp) stamp = ParseEpochStamp(text);
  }
  return facts;
}

}  // namespace jobmon::triage
