#pragma once
// A bounded run of timed items, oldest first, in one circular buffer that
// grows to at most `max_items`: a window series with a handful of points
// costs those points, not a std::deque's first 512-byte block and map
// (libstdc++ allocates both even for an empty deque). At 10,000 jobs the
// window holds about a million series.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace jobmon::monitor {

template <typename T>
class TimeRing {
 public:
  class const_iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator() = default;
    const_iterator(const TimeRing* ring, size_t index) : ring_(ring), index_(index) {}
    reference operator*() const { return (*ring_)[index_]; }
    pointer operator->() const { return &(*ring_)[index_]; }
    const_iterator& operator++() {
      ++index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator was = *this;
      ++index_;
      return was;
    }
    const_iterator& operator--() {
      --index_;
      return *this;
    }
    const_iterator operator--(int) {
      const_iterator was = *this;
      --index_;
      return was;
    }
    bool operator==(const const_iterator& other) const { return index_ == other.index_; }

   private:
    const TimeRing* ring_ = nullptr;
    size_t index_ = 0;
  };
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  explicit TimeRing(size_t max_items) : max_items_(max_items > 0 ? max_items : 1) {}

  // Appends `item`; at max_items the oldest is dropped to make room.
  void push_back(const T& item) {
    if (size_ == max_items_) pop_front();
    if (size_ == buffer_.size()) Grow();
    buffer_[(head_ + size_) % buffer_.size()] = item;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) % buffer_.size();
    --size_;
  }
  void pop_back() { --size_; }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const T& operator[](size_t i) const { return buffer_[(head_ + i) % buffer_.size()]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size_ - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

 private:
  // A quarter more room (4 at first), never past max_items, oldest first
  // again: a full hour's 360 points sit in at most ~410 slots (6.8 KiB), as
  // tight as a deque's blocks, where doubling would leave 512.
  void Grow() {
    const size_t capacity = std::min(max_items_, buffer_.size() + buffer_.size() / 4 + 4);
    std::vector<T> grown;
    grown.reserve(capacity);
    for (size_t i = 0; i < size_; ++i) grown.push_back((*this)[i]);
    grown.resize(capacity);
    buffer_ = std::move(grown);
    head_ = 0;
  }

  size_t max_items_;
  std::vector<T> buffer_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace jobmon::monitor
