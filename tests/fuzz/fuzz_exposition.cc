// The exposition parser on arbitrary scrape bodies (the monitor reads them
// from the network).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobmon/monitor/exposition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = jobmon::monitor::ParseExposition(text);
  for (const auto& sample : parsed.samples) {
    if (sample.name.empty()) __builtin_trap();
  }
  return 0;
}
