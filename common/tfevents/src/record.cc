#include "jobmon/tfevents/record.h"

#include <cstring>

#include "jobmon/tfevents/crc32c.h"

namespace jobmon::tfevents {
namespace {

void AppendLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t ReadLittleEndian(std::string_view in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

}  // namespace

std::string FrameRecord(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 16);
  AppendLittleEndian(out, payload.size(), 8);
  AppendLittleEndian(out, MaskCrc(Crc32c(std::string_view(out.data(), 8))), 4);
  out.append(payload);
  AppendLittleEndian(out, MaskCrc(Crc32c(payload)), 4);
  return out;
}

Expected<RecordBatch> ParseRecords(std::string_view buffer, uint64_t max_record_bytes) {
  RecordBatch batch;
  size_t offset = 0;
  while (buffer.size() - offset >= 12) {
    std::string_view header = buffer.substr(offset, 12);
    uint64_t length = ReadLittleEndian(header, 8);
    uint32_t length_crc = static_cast<uint32_t>(ReadLittleEndian(header.substr(8), 4));
    if (MaskCrc(Crc32c(header.substr(0, 8))) != length_crc) {
      return Error{"TFRecord length CRC mismatch at offset " + std::to_string(offset)};
    }
    if (length > max_record_bytes) {
      return Error{"TFRecord of " + std::to_string(length) + " bytes at offset " +
                   std::to_string(offset) + " exceeds the limit"};
    }
    if (buffer.size() - offset - 12 < length + 4) break;  // still being written
    std::string_view payload = buffer.substr(offset + 12, length);
    uint32_t payload_crc =
        static_cast<uint32_t>(ReadLittleEndian(buffer.substr(offset + 12 + length), 4));
    if (MaskCrc(Crc32c(payload)) != payload_crc) {
      return Error{"TFRecord payload CRC mismatch at offset " + std::to_string(offset)};
    }
    batch.payloads.emplace_back(payload);
    offset += 12 + length + 4;
  }
  batch.consumed = offset;
  return batch;
}

}  // namespace jobmon::tfevents
