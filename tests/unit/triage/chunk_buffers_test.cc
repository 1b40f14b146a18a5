// The scan's chunk buffers (triage/src/chunk_buffers.h): one mapping, each
// buffer its own bytes, starting on a huge page's boundary.
#include "chunk_buffers.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace jobmon::triage {
namespace {

TEST(ChunkBuffers, EachBufferHoldsItsOwnBytes) {
  constexpr size_t kCount = 8, kEach = (size_t{1} << 20) + 1;  // the scan's: 1 MiB and a newline
  ChunkBuffers buffers(kCount, kEach);
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(buffers[i].size(), kEach);
    buffers[i].front() = static_cast<char>('a' + i);
    buffers[i].back() = static_cast<char>('A' + i);
  }
  for (size_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(buffers[i].front(), static_cast<char>('a' + i)) << i;
    EXPECT_EQ(buffers[i].back(), static_cast<char>('A' + i)) << i;
    if (i > 0) {
      EXPECT_EQ(buffers[i].data(), buffers[i - 1].data() + kEach) << i;
    }
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffers[0].data()) % (uintptr_t{2} << 20), 0u)
      << "the first buffer starts on a huge page's boundary";
}

}  // namespace
}  // namespace jobmon::triage
