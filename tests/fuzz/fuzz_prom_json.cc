// Prometheus's answers and a TSDB block's meta.json come from outside
// (a tunnel, a user's diag dir). Property: every parser returns a value or
// an Error, never throws or crashes; a parsed answer holds no NaN sample.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "jobmon/diagnose/prom_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobmon::diagnose;
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto series = ParseQueryResponse(text)) {
    for (const auto& s : *series)
      for (const auto& sample : s.samples)
        if (std::isnan(sample.value)) __builtin_trap();
  }
  ParseLabelValues(text);
  if (auto meta = ParseBlockMeta(text); meta && meta->range.max_ms < meta->range.min_ms)
    __builtin_trap();
  if (auto head = ParseTsdbHeadRange(text); head && *head && (*head)->max_ms < (*head)->min_ms)
    __builtin_trap();
  ParseStatusFlag(text, "storage.tsdb.path");
  if (auto times = ParseTsdbTimesFromMetrics(text); times && times->max_ms < times->min_ms)
    __builtin_trap();
  return 0;
}
