#pragma once
// Reading and consuming a scan's chunks on both cores. A chunk's reading
// (the Hyperscan database's matches, and the pure parses of its lines:
// chunk_reading.h) and the scan state's consuming of it are each about half
// of a large log's work: a worker thread reads chunks ahead while this
// thread consumes them in order, and this thread reads the oldest chunk
// itself when the worker has not taken it, or a later one while the worker
// reads the oldest (so neither half waits for the other). Private to the
// scanner (log_scan.cc).

#include <hs/hs.h>

#include <array>
#include <condition_variable>
#include <memory_resource>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <utility>

#include "chunk_buffers.h"
#include "chunk_reading.h"
#include "scan_state.h"

namespace jobmon::triage {

class MatchAhead {
 public:
  // `prototype` is cloned once per matching thread; each chunk's buffer
  // holds `capacity` bytes, its reading's memory twice as many.
  MatchAhead(const LogScanner::Impl& impl, ChunkSink& sink, hs_scratch_t* prototype,
             size_t capacity);
  MatchAhead(const MatchAhead&) = delete;
  MatchAhead& operator=(const MatchAhead&) = delete;
  ~MatchAhead();
  bool ok() const { return own_matching_.hs != nullptr; }

  // The next chunk's buffer for the caller to fill (read into: no copy of a
  // chunk is made); the same one until it is submitted. A slot is freed
  // first when all are taken.
  std::span<char> Acquire();
  // The acquired buffer's first `size` bytes as the next chunk, consumed by
  // Flush at the latest.
  void Submit(size_t size);
  // Every chunk submitted, consumed in order.
  void Flush();

 private:
  // At least one being consumed, one read by the worker, one read here
  // while the worker reads the oldest, one being filled; eight measured
  // no slower than four and at times faster (docs/development.md, "The last
  // figures").
  static constexpr size_t kSlots = 8;
  enum class Stage { kFree, kFilled, kMatching, kMatched };
  // Each on cache lines of its own: one thread fills a slot's reading
  // while the other consumes the slot beside it.
  struct alignas(64) Slot {
    Slot(std::span<char> text_buffer, std::span<char> reading_memory)
        : text(text_buffer),
          memory(reading_memory.data(), reading_memory.size(), std::pmr::new_delete_resource()),
          reading(&memory) {}
    std::span<char> text;
    size_t size = 0;  // the chunk: text's first bytes
    // The reading's vectors', from buffers_ (then from the heap when full):
    // they keep their size from chunk to chunk, so it stops growing.
    std::pmr::monotonic_buffer_resource memory;
    ChunkReading reading;
    Stage stage = Stage::kFree;
  };
  template <size_t... Index>
  static std::array<Slot, kSlots> MakeSlots(const ChunkBuffers& buffers,
                                            std::index_sequence<Index...>) {
    return {Slot(buffers.text(Index), buffers.reading(Index))...};
  }
  static std::string_view View(const Slot& slot) { return {slot.text.data(), slot.size}; }
  void ConsumeOldest();
  void Work();
  // The oldest submitted slot no thread has taken to read; nullptr when
  // none. Called with mutex_ held.
  Slot* OldestUnread();

  const LogScanner::Impl& impl_;
  ChunkSink& sink_;
  ChunkBuffers buffers_;
  MatchScratch own_matching_;     // this thread's
  MatchScratch worker_matching_;  // the worker's
  std::array<Slot, kSlots> slots_;
  size_t oldest_ = 0;   // the next slot to consume, in submission order
  size_t pending_ = 0;  // slots submitted, not yet consumed
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::thread worker_;  // absent when no thread could be had: then all is matched here
};

}  // namespace jobmon::triage
