// Step-line and timestamp parsers, the step filter and the progress-line
// learner on arbitrary lines (the input split at newlines).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobmon/triage/progress_template.h"
#include "jobmon/triage/step_filter.h"
#include "jobmon/triage/step_lines.h"

using namespace jobmon::triage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  StepFilter filter;
  TemplateLearner learner;
  uint64_t number = 0;
  while (!input.empty()) {
    size_t nl = input.find('\n');
    std::string_view line = input.substr(0, nl);
    input = nl == input.npos ? std::string_view() : input.substr(nl + 1);
    ++number;
    for (StepProfile p : AutoDetectedProfiles()) {
      StepSample in_place;  // the scan's way (chunk_reading.cc): the same sample
      const bool read_in_place = ParseStepInto(p, line, in_place);
      auto step = ParseStep(p, line);
      if (read_in_place != step.has_value()) __builtin_trap();
      if (step && (in_place.step != step->step || in_place.seconds != step->seconds ||
                   in_place.total_steps != step->total_steps))
        __builtin_trap();
      if (step) {
        if (step->step < 0) __builtin_trap();
        if (step->seconds && !(*step->seconds >= 0)) __builtin_trap();
        for (const auto& accepted : filter.Offer(p, *step, number, line)) {
          if (accepted.sample.step < 0) __builtin_trap();
        }
      }
    }
    if (auto seconds = FindStepSeconds(line); seconds && !(*seconds > 0)) __builtin_trap();
    (void)DetectStep(line);
    (void)ParseIsoTimestamp(line);
    (void)FindIsoTimestamp(line);
    (void)WithoutTaskLabel(line);
    learner.Offer(line, static_cast<double>(number));
    if (learner.kind()) learner.Adopt();
    if (auto sample = learner.Match(line); sample && sample->step < 0) __builtin_trap();
  }
  return 0;
}
