#include "chunk_buffers.h"

#include <sys/mman.h>

#include <cstdint>

namespace jobmon::triage {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's and arm64's (4 KiB pages) PMD size

}  // namespace

ChunkBuffers::ChunkBuffers(size_t texts, size_t readings, size_t text_bytes, size_t reading_bytes)
    : texts_(texts), text_bytes_(text_bytes), reading_bytes_(reading_bytes) {
  const size_t size = texts * text_bytes + readings * reading_bytes;
  // A huge page's worth more, so the buffers can start on a huge page's
  // boundary: the slack is only address space, never touched.
  mapped_ = size + kHugePage;
  void* mapping =
      mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    mapped_ = 0;
    fallback_.reset(new char[size]);  // default-initialised: only what is written is read
    base_ = fallback_.get();
    return;
  }
  mapping_ = mapping;
  const auto address = reinterpret_cast<uintptr_t>(mapping);
  base_ = reinterpret_cast<char*>((address + kHugePage - 1) & ~(kHugePage - 1));
  madvise(base_, mapped_ - static_cast<size_t>(base_ - static_cast<char*>(mapping)), MADV_HUGEPAGE);
}

ChunkBuffers::~ChunkBuffers() {
  if (mapping_) munmap(mapping_, mapped_);
}

}  // namespace jobmon::triage
