#include "match_ahead.h"

#include <system_error>

namespace jobmon::triage {

MatchAhead::MatchAhead(const LogScanner::Impl& impl, ChunkSink& sink, hs_scratch_t* prototype,
                       size_t capacity)
    : impl_(impl),
      sink_(sink),
      buffers_(kSlots + 2, kSlots, capacity, 2 * capacity),
      slots_(MakeSlots(buffers_, std::make_index_sequence<kSlots>())) {
  // The two matching threads' texts follow the slots'.
  own_matching_.unrepeated = buffers_.text(kSlots);
  worker_matching_.unrepeated = buffers_.text(kSlots + 1);
  for (MatchScratch* matching : {&own_matching_, &worker_matching_})
    matching->lines.reserve(MarkedLinesAtMost(capacity));
  if (hs_clone_scratch(prototype, &own_matching_.hs) != HS_SUCCESS) own_matching_.hs = nullptr;
  if (hs_clone_scratch(prototype, &worker_matching_.hs) != HS_SUCCESS) return;
  try {
    worker_ = std::thread([this] { Work(); });
  } catch (const std::system_error&) {
    // No thread to be had (a process or memory limit): all is matched here.
  }
}

MatchAhead::~MatchAhead() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (worker_matching_.hs) hs_free_scratch(worker_matching_.hs);
  if (own_matching_.hs) hs_free_scratch(own_matching_.hs);
}

std::span<char> MatchAhead::Acquire() {
  if (pending_ == kSlots) ConsumeOldest();
  // Free, so the worker does not touch it: filled without the lock.
  return slots_[(oldest_ + pending_) % kSlots].text;
}

void MatchAhead::Submit(size_t size) {
  Slot& slot = slots_[(oldest_ + pending_) % kSlots];
  slot.size = size;
  {
    std::lock_guard lock(mutex_);
    slot.stage = Stage::kFilled;
    ++pending_;
  }
  changed_.notify_all();
}

void MatchAhead::Flush() {
  while (pending_ > 0) ConsumeOldest();
}

void MatchAhead::ConsumeOldest() {
  Slot& slot = slots_[oldest_];
  std::unique_lock lock(mutex_);
  // Read the oldest here if the worker has not taken it; while the worker
  // reads it, read a later one here rather than wait.
  while (slot.stage != Stage::kMatched) {
    Slot* unread = OldestUnread();
    if (!unread) {
      changed_.wait(lock, [&] { return slot.stage == Stage::kMatched || OldestUnread(); });
      continue;
    }
    unread->stage = Stage::kMatching;
    lock.unlock();
    ReadChunk(impl_, View(*unread), own_matching_, unread->reading);
    lock.lock();
    unread->stage = Stage::kMatched;
  }
  lock.unlock();
  sink_.Chunk(View(slot), slot.reading);
  lock.lock();
  slot.stage = Stage::kFree;
  oldest_ = (oldest_ + 1) % kSlots;
  --pending_;
}

MatchAhead::Slot* MatchAhead::OldestUnread() {
  for (size_t i = 0; i < pending_; ++i) {
    Slot& slot = slots_[(oldest_ + i) % kSlots];
    if (slot.stage == Stage::kFilled) return &slot;
  }
  return nullptr;
}

// The oldest chunk not yet taken, read; until the scan ends.
void MatchAhead::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    Slot* next = nullptr;
    changed_.wait(lock, [&] { return stopping_ || (next = OldestUnread()) != nullptr; });
    if (stopping_) return;
    next->stage = Stage::kMatching;
    lock.unlock();
    ReadChunk(impl_, View(*next), worker_matching_, next->reading);
    lock.lock();
    next->stage = Stage::kMatched;
    changed_.notify_all();
  }
}

}  // namespace jobmon::triage
