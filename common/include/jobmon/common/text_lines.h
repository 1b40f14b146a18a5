#pragma once
// The lines of a text: `for (std::string_view line : TextLines(text))`.
// Each line comes without its '\n' ('\r' is kept: callers strip it), empty
// lines too, and a last line without '\n'; nothing after a final '\n', and
// nothing for an empty text. The lines point into `text`, which must outlive
// them. (std::views::split yields an empty piece after a final '\n', and
// clang 14 does not compile it with libstdc++ 12.)

#include <concepts>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

namespace jobmon {

class TextLines {
 public:
  class iterator {
   public:
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using iterator_concept = std::forward_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // operator* returns a value

    iterator() = default;
    explicit iterator(std::string_view rest)
        : rest_(rest), line_(rest.substr(0, rest.find('\n'))) {}

    std::string_view operator*() const { return line_; }
    iterator& operator++() {
      rest_.remove_prefix(line_.size() < rest_.size() ? line_.size() + 1 : rest_.size());
      line_ = rest_.substr(0, rest_.find('\n'));
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++*this;
      return before;
    }
    // Within one text, what is left identifies the position.
    friend bool operator==(const iterator& a, const iterator& b) {
      return a.rest_.size() == b.rest_.size();
    }

   private:
    std::string_view rest_;  // the text from this line on
    std::string_view line_;
  };

  TextLines() = default;
  explicit TextLines(std::string_view text) : text_(text) {}
  // A temporary std::string would be gone before its lines are read.
  template <typename S>
  explicit TextLines(S&&) requires(!std::is_lvalue_reference_v<S> &&
                                   std::same_as<std::remove_cv_t<S>, std::string>) = delete;

  iterator begin() const { return iterator(text_); }
  iterator end() const { return iterator(text_.substr(text_.size())); }

 private:
  std::string_view text_;
};

// The text up to its first '\n' (all of it without one).
inline std::string_view FirstLine(std::string_view text) { return text.substr(0, text.find('\n')); }

}  // namespace jobmon
