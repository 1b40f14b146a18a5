#pragma once
// Step-line profiles: how each training framework reports a finished step.
// Pure parsers over one line; the scanner finds candidate lines first.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobmon::triage {

enum class StepProfile { kMaxText, kMegatron, kTorchTitan, kHuggingFace, kCustom };
inline constexpr int kStepProfileCount = 5;
const char* ToString(StepProfile profile);
std::optional<StepProfile> ParseStepProfile(std::string_view name);  // "maxtext", ...

struct StepSample {
  int64_t step = 0;
  std::optional<double> seconds;       // step time, where the line carries it
  std::optional<int64_t> total_steps;  // "iteration N/ M", "N/M [..]"
  std::optional<double> timestamp;     // unix seconds, where the line carries one
};

// "completed step: N, seconds: X, ..."
std::optional<StepSample> ParseMaxTextStep(std::string_view line);
// "iteration N/ M | ... | elapsed time per iteration (ms): X | ..." (1-based: step N-1)
std::optional<StepSample> ParseMegatronStep(std::string_view line);
// "... 2025-01-01 12:00:00,123 - root - INFO - step:  N  loss: ..." (time from timestamps)
std::optional<StepSample> ParseTorchTitanStep(std::string_view line);
// tqdm: " 10%|█ | 100/1000 [02:03<18:27,  1.23s/it]" (the last update of a \r-joined
// line; 100 done: step 99)
std::optional<StepSample> ParseTqdmStep(std::string_view line);

std::optional<StepSample> ParseStep(StepProfile profile, std::string_view line);

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
// absl's "E1122 16:22:04.700259 ..." prefix (after an srun label), which
// carries no year: `year` supplies it.
std::optional<double> ParseAbslTimestamp(std::string_view line, int year);
// The first ISO timestamp anywhere in the line.
std::optional<double> FindIsoTimestamp(std::string_view line);

// srun --label prefix "N: " -> N.
std::optional<int> TaskLabel(std::string_view line);
std::string_view WithoutTaskLabel(std::string_view line);

}  // namespace jobmon::triage
