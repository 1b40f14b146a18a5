#pragma once
// CRC-32C (Castagnoli) and the TFRecord mask. Debian 12 ships no C++ CRC-32C
// library (Abseil gained one only in 2023), so this is the small table form.

#include <cstdint>
#include <string_view>

namespace jobmon::tfevents {

uint32_t Crc32c(std::string_view data);
// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t MaskCrc(uint32_t crc);

}  // namespace jobmon::tfevents
