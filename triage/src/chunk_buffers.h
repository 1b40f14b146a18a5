#pragma once
// The scan's chunk buffers, in one anonymous mapping advised into huge
// pages: on a virtual machine the first touch of each 4 KiB page is a fault
// of some microseconds, and the buffers' 2,000-odd pages were a tenth of a
// 32 MiB log's triage (docs/development.md, "The last figures"). Where the
// kernel gives no huge pages the advice is ignored and the buffers work as
// any memory. Private to the scanner (match_ahead.h).

#include <cstddef>
#include <memory>
#include <span>

namespace jobmon::triage {

class ChunkBuffers {
 public:
  // `count` buffers of `each` bytes; not zeroed.
  ChunkBuffers(size_t count, size_t each);
  ChunkBuffers(const ChunkBuffers&) = delete;
  ChunkBuffers& operator=(const ChunkBuffers&) = delete;
  ~ChunkBuffers();

  std::span<char> operator[](size_t index) const { return {base_ + index * each_, each_}; }

 private:
  size_t each_;
  char* base_ = nullptr;
  void* mapping_ = nullptr;  // what munmap is given, from before `base_`
  size_t mapped_ = 0;
  std::unique_ptr<char[]> fallback_;  // where no mapping could be had
};

}  // namespace jobmon::triage
