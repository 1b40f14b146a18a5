#pragma once
// Step-line profiles: how each training framework reports a finished step.
// Pure parsers over one line; the scanner finds candidate lines first.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jobmon::triage {

// New profiles go at the end: the value indexes per-profile arrays, and
// "hf" (tqdm bars) and "custom" keep their old positions.
enum class StepProfile {
  kMaxText,
  kMegatron,
  kTorchTitan,
  kHuggingFace,  // tqdm bars: HF Trainer, accelerate/diffusers "Steps:", plain tqdm loops
  kCustom,
  kLightning,
  kDeepSpeed,
  kT5x,      // T5X/Flax through CLU's LoggingWriter
  kGeneric,  // a plain loop's "step N" / "iteration N" / "Step N/M"
  kLearned,  // the job's own progress line, learned (progress_template.h)
  kPulse,    // no progress line: the job's periodic output (weaker evidence)
};
inline constexpr int kStepProfileCount = 11;
// The generic profile counts only after this many increasing samples: one
// stray "step 3 ..." line (a preprocessing stage, a test) must not make a
// job "training", while a real loop prints its counter again and again.
inline constexpr int kGenericMinSamples = 3;
const char* ToString(StepProfile profile);
std::optional<StepProfile> ParseStepProfile(std::string_view name);  // "maxtext", ...

// One progress line's position. Progress is ordered, not one number: with
// `epoch` set, `step` counts within the epoch as printed (restarting every
// epoch) and `total_steps` is the epoch's; StepFilter (step_filter.h) turns
// the pair into the run's global step. `nested` marks a tqdm bar drawn
// under another (position > 0): the inner counter of a composite position.
struct StepSample {
  int64_t step = 0;
  std::optional<double> seconds;       // step time, where the line carries it
  std::optional<int64_t> total_steps;  // "iteration N/ M", "N/M [..]"
  std::optional<double> timestamp;     // unix seconds, where the line carries one
  std::optional<int64_t> epoch;        // "epoch 2 iter 17/60", "Epoch [2/3], Step [17/60]"
  std::optional<int64_t> epochs;       // the epochs planned ("Epoch [2/3]": 3)
  bool nested = false;                 // a tqdm bar under another bar
};

inline StepSample MakeStepSample(int64_t step, std::optional<double> seconds,
                                 std::optional<int64_t> total_steps,
                                 std::optional<double> timestamp) {
  StepSample sample;
  sample.step = step;
  sample.seconds = seconds;
  sample.total_steps = total_steps;
  sample.timestamp = timestamp;
  return sample;
}

// The step time a progress line states, whatever its format: tqdm's
// "1.02s/it" / "10.5it/s", "time 20.1ms", "time: 0.41s", "step_time=1.2",
// Megatron's "elapsed time per iteration (ms): 1002.3" / "(s): 1.0",
// DeepSpeed's "iter time (s): 0.5". Seconds, or nullopt.
std::optional<double> FindStepSeconds(std::string_view line);

// "completed step: N, seconds: X, ..."
std::optional<StepSample> ParseMaxTextStep(std::string_view line);
// "iteration N/ M | ... | elapsed time per iteration (ms): X | ..." (1-based: step N-1)
std::optional<StepSample> ParseMegatronStep(std::string_view line);
// "... 2025-01-01 12:00:00,123 - root - INFO - step:  N  loss: ..." (time from timestamps)
std::optional<StepSample> ParseTorchTitanStep(std::string_view line);
// tqdm: " 10%|█ | 100/1000 [02:03<18:27,  1.23s/it]" (the last update of a \r-joined
// line; 100 done: step 99)
// A nested bar (tqdm position > 0, followed by ESC[A) is read as `nested`
// (an epoch's inner bar under an epoch bar, or an evaluation bar under the
// training bar: StepFilter tells which); bars of one item ("1/1": a
// checkpoint writer) and evaluation/validation bars by their description
// are skipped; the "Epoch N" bars are Lightning's.
std::optional<StepSample> ParseTqdmStep(std::string_view line);
// Lightning TQDMProgressBar "Epoch E:  4%|▎ | 40/1095 [00:03<01:37, 10.84it/s, v_num=10]":
// the bar restarts every epoch, so the step is E * total + 40 - 1.
std::optional<StepSample> ParseLightningStep(std::string_view line);
// A bar line holds every update since the last newline, and the parsers
// read its last: the first update tells where the bar opened, as the step
// to run next (0 for "0/N": a fresh start). hf and lightning only.
std::optional<int64_t> BarOpenedAt(StepProfile profile, std::string_view line);
// DeepSpeed "steps: N loss: X ... iter time (s): T ..." (pipeline engine) and
// "[Rank 0] step=N, skipped=K, lr=..." (engine): N steps done, step N-1.
std::optional<StepSample> ParseDeepSpeedStep(std::string_view line);
// CLU LoggingWriter (T5X, Flax examples) "I0101 12:00:00.1 1 logging_writer.py:48] [N] k=v, ...".
std::optional<StepSample> ParseT5xStep(std::string_view line);
// A training loop's logging dict: HF Trainer writes str(logs) under its bar
// (trainer_callback.py ProgressCallback.on_log), `{'loss': ..., 'epoch': ...}`,
// and scripts print json.dumps of theirs. It carries no step, yet it says
// the loop ran: progress between a bar's bursts.
bool IsLoggingDict(std::string_view line);
// A line that holds many tqdm updates ("\r"-joined: output held back by a
// pipe's or srun's buffer and delivered at once) spans the bar time between
// its first and last update ("[00:08<..." to "[00:12<...", a new bar's
// time added from 0): how long progress was out of sight. Seconds, or
// nullopt for a line of one update or none.
std::optional<double> TqdmBurstSeconds(std::string_view line);
// "step N", "Step N/M", "iteration N" with a metric (loss, lr, ...) or a
// total on the same line; the number as printed (the scanner shifts loops
// that count from 1).
std::optional<StepSample> ParseGenericStep(std::string_view line);

// A duration written as a number and an optional unit ("23 ms", "0.5s",
// "1.5 min", "2"): seconds, with `bare_scale` for a number without a unit
// (1 for seconds, 0.001 for milliseconds). `after` is the text right after
// the number, where a unit may stand when the number was captured alone.
std::optional<double> ParseDuration(std::string_view number, std::string_view after,
                                    double bare_scale);

std::optional<StepSample> ParseStep(StepProfile profile, std::string_view line);
// The same, written into `out` (a default StepSample) where it lies: the
// scan parses into its sample vector, and a sample parsed apart and copied
// in stalled on store forwarding at every step line (perf annotate). False,
// `out` untouched or partly written, where the line is no step of `profile`.
bool ParseStepInto(StepProfile profile, std::string_view line, StepSample& out);

// The profiles tried on a log that names none, in the order tried: the first
// that parses a line is the job's (the monitor then keeps it).
const std::vector<StepProfile>& AutoDetectedProfiles();
struct DetectedStep {
  StepProfile profile;
  StepSample sample;
};
std::optional<DetectedStep> DetectStep(std::string_view line);

// "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (optional ",mmm"/".frac", "Z"), as UTC.
std::optional<double> ParseIsoTimestamp(std::string_view text);
// A line's leading stamp that carries no year (`year` supplies it), after
// an srun label: absl's "E1122 16:22:04.700259 ..." and detectron2's logger
// "[11/22 16:22:04 name]: ..." (datefmt "%m/%d %H:%M:%S", maybe coloured;
// docs/signature-sources.md).
std::optional<double> ParseYearlessTimestamp(std::string_view line, int year);
// The first ISO timestamp anywhere in the line.
std::optional<double> FindIsoTimestamp(std::string_view line);
// Unix seconds as time.time() prints them (2017..2033, optional fraction),
// first on the line (after an srun label) or after a time key (`ts=`,
// `"time": `, `timestamp=`, ...).
std::optional<double> ParseEpochStamp(std::string_view line);
// A leading time of day alone, `HH:MM:SS[.frac]` (maybe bracketed, after an
// srun label): seconds since midnight. The date comes from an earlier line.
std::optional<double> ParseClockStamp(std::string_view line);
// `clock` (seconds since midnight) dated by `reference` (unix s: an earlier
// line's time): the first such moment not before `reference` minus an hour
// (a clock past midnight is on the next day); nullopt when that is more
// than `max_ahead` seconds after `reference` (a duration, not a clock).
std::optional<double> DateClock(double clock, double reference, double max_ahead);

// srun --label prefix "N: " -> N.
std::optional<int> TaskLabel(std::string_view line);
std::string_view WithoutTaskLabel(std::string_view line);
// Both, the label read once: N (nullopt without a label) and the text after it.
std::pair<std::optional<int>, std::string_view> SplitTaskLabel(std::string_view line);

}  // namespace jobmon::triage
