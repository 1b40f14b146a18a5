#pragma once
// The memory of the scan's chunks in flight, in one anonymous mapping
// advised into huge pages: each chunk's text buffer, the memory its
// reading's vectors grow in (chunk_reading.h), and each matching thread's
// text buffer for the lines it scans apart (MatchScratch::unrepeated). On a
// virtual machine the first touch of each 4 KiB page is a fault of some
// microseconds: as 4 KiB pages, the eight chunks' buffers and readings were
// 5,000-odd faults, a third of a 32 MiB log's triage (docs/development.md,
// "The last figures"). Where the kernel gives no huge pages the advice is
// ignored and the memory works as any. Private to the scanner
// (match_ahead.h).

#include <cstddef>
#include <memory>
#include <span>

namespace jobmon::triage {

class ChunkBuffers {
 public:
  // `texts` text buffers of `text_bytes` and `readings` reading memories of
  // `reading_bytes`; not zeroed.
  ChunkBuffers(size_t texts, size_t readings, size_t text_bytes, size_t reading_bytes);
  ChunkBuffers(const ChunkBuffers&) = delete;
  ChunkBuffers& operator=(const ChunkBuffers&) = delete;
  ~ChunkBuffers();

  std::span<char> text(size_t index) const { return {base_ + index * text_bytes_, text_bytes_}; }
  std::span<char> reading(size_t index) const {
    return {base_ + texts_ * text_bytes_ + index * reading_bytes_, reading_bytes_};
  }

 private:
  size_t texts_, text_bytes_, reading_bytes_;
  char* base_ = nullptr;
  void* mapping_ = nullptr;  // what munmap is given, from before `base_`
  size_t mapped_ = 0;
  std::unique_ptr<char[]> fallback_;  // where no mapping could be had
};

}  // namespace jobmon::triage
