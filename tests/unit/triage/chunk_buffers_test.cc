// The memory of the scan's chunks (triage/src/chunk_buffers.h): one mapping,
// each text buffer and reading memory its own bytes, starting on a huge
// page's boundary.
#include "chunk_buffers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

namespace jobmon::triage {
namespace {

TEST(ChunkBuffers, EachBufferHoldsItsOwnBytes) {
  // The scan's: 1 MiB and a newline, twice that for the reading; a text
  // for each slot and each matching thread, a reading for each slot.
  constexpr size_t kTexts = 10, kReadings = 8, kText = (size_t{1} << 20) + 1, kReading = 2 * kText;
  ChunkBuffers buffers(kTexts, kReadings, kText, kReading);
  std::vector<std::span<char>> all;
  for (size_t i = 0; i < kTexts; ++i) {
    ASSERT_EQ(buffers.text(i).size(), kText);
    all.push_back(buffers.text(i));
  }
  for (size_t i = 0; i < kReadings; ++i) {
    ASSERT_EQ(buffers.reading(i).size(), kReading);
    all.push_back(buffers.reading(i));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].front() = static_cast<char>(i);
    all[i].back() = static_cast<char>(i + 100);
  }
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].front(), static_cast<char>(i)) << i;
    EXPECT_EQ(all[i].back(), static_cast<char>(i + 100)) << i;
    for (size_t j = 0; j < i; ++j) {
      const bool apart = all[i].data() >= all[j].data() + all[j].size() ||
                         all[j].data() >= all[i].data() + all[i].size();
      EXPECT_TRUE(apart) << i << " and " << j << " overlap";
    }
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffers.text(0).data()) % (uintptr_t{2} << 20), 0u)
      << "the first buffer starts on a huge page's boundary";
}

}  // namespace
}  // namespace jobmon::triage
