#pragma once
// TFRecord framing: u64 length (LE), masked CRC-32C of the length bytes,
// payload, masked CRC-32C of the payload.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::tfevents {

std::string FrameRecord(std::string_view payload);

struct RecordBatch {
  std::vector<std::string> payloads;
  size_t consumed = 0;  // bytes of whole records; a partial tail is left for the next read
};

// Pure: parses every whole record in `buffer`. A record still being written
// (short tail) is not an error; a CRC mismatch or an absurd length is.
Expected<RecordBatch> ParseRecords(std::string_view buffer, uint64_t max_record_bytes = 64 << 20);

}  // namespace jobmon::tfevents
