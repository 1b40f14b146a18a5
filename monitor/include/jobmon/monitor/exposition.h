#pragma once
// The Prometheus text exposition format, as the monitor reads it when it
// scrapes a job's exporters itself. Pure and defensive: a malformed line is
// counted and skipped, never trusted.

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jobmon::monitor {

// A sample's labels, a handful each: one flat vector, searched in order,
// costs a sample one allocation where a std::map cost one per label (the
// monitor parses a million samples a cycle at 10,000 jobs). The map's
// operations the callers use, with its meaning: a key is held once.
class Labels {
 public:
  using value_type = std::pair<std::string, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;

  Labels() = default;
  Labels(std::initializer_list<value_type> items) {
    for (const value_type& item : items) emplace(item.first, item.second);
  }

  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void reserve(size_t n) { items_.reserve(n); }

  const_iterator find(std::string_view key) const {
    return std::find_if(items_.begin(), items_.end(),
                        [key](const value_type& item) { return item.first == key; });
  }
  size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  const std::string& at(std::string_view key) const {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("no label " + std::string(key));
    return it->second;
  }
  // The value of `key`, an empty one added when it has none.
  std::string& operator[](std::string_view key) {
    if (auto it = find(key); it != end()) return items_[static_cast<size_t>(it - begin())].second;
    return items_.emplace_back(std::string(key), std::string()).second;
  }
  // Adds `key` with `value` unless it has one already (std::map::emplace).
  void emplace(std::string_view key, std::string_view value) {
    if (find(key) == end()) items_.emplace_back(std::string(key), std::string(value));
  }

 private:
  std::vector<value_type> items_;
};

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

struct Exposition {
  std::vector<Sample> samples;
  size_t bad_lines = 0;
};

Exposition ParseExposition(std::string_view text);
// Only the samples named in `names`: other lines are skipped before their
// labels are read (and are not counted as bad). What the monitor does with
// each scrape, which holds far more families than its window keeps.
Exposition ParseExposition(std::string_view text, const std::vector<std::string>& names);

}  // namespace jobmon::monitor
