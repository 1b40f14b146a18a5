// Step-line and timestamp parsers on arbitrary lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobmon/triage/step_lines.h"

using namespace jobmon::triage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  for (StepProfile p : AutoDetectedProfiles()) {
    if (auto step = ParseStep(p, line)) {
      if (step->step < 0) __builtin_trap();
      if (step->seconds && !(*step->seconds >= 0)) __builtin_trap();
    }
  }
  (void)DetectStep(line);
  (void)ParseIsoTimestamp(line);
  (void)FindIsoTimestamp(line);
  (void)WithoutTaskLabel(line);
  return 0;
}
