// TensorBoard event files are written by user code: framing and protobufs
// must survive anything.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobmon/tfevents/event.h"
#include "jobmon/tfevents/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)jobmon::tfevents::DecodeEvent(bytes);
  auto batch = jobmon::tfevents::ParseRecords(bytes, 1 << 20);
  if (!batch) return 0;
  if (batch->consumed > size) __builtin_trap();
  for (const auto& payload : batch->payloads) (void)jobmon::tfevents::DecodeEvent(payload);
  return 0;
}
