#include "jobmon/common/find_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace jobmon {
namespace {

// FindText finds what std::string_view::find finds.
TEST(FindText, AgreesWithFind) {
  EXPECT_EQ(FindText("completed step: 3", "seconds:"), std::string_view::npos);
  EXPECT_EQ(FindText("", "x"), std::string_view::npos);
  EXPECT_EQ(FindText("abc", ""), 0u);
  EXPECT_EQ(FindText("abc", "", 3), 3u);
  EXPECT_EQ(FindText("abc", "", 4), std::string_view::npos);
  EXPECT_EQ(FindText("aaab", "aab"), 1u);
  EXPECT_EQ(FindText("abab", "ab", 1), 2u);
  EXPECT_EQ(FindText("abab", "b", 4), std::string_view::npos);
  EXPECT_EQ(FindText(std::string_view("a\0b", 3), std::string_view("\0b", 2)), 1u);
  std::mt19937 random(20261130);
  const std::string alphabet = "ab:s ";
  for (int n = 0; n < 20000; ++n) {
    std::string text(random() % 12, 'a'), needle(random() % 4, 'a');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    for (char& c : needle) c = alphabet[random() % alphabet.size()];
    const size_t from = random() % (text.size() + 2);
    EXPECT_EQ(FindText(text, needle, from), std::string_view(text).find(needle, from))
        << "'" << text << "' '" << needle << "' from " << from;
    // A literal needle takes the overload that knows its length.
    const std::string_view view(text);
    EXPECT_EQ(FindText(text, "a", from), view.find("a", from)) << text;
    EXPECT_EQ(FindText(text, "ab", from), view.find("ab", from)) << text;
    EXPECT_EQ(FindText(text, "s :a", from), view.find("s :a", from)) << text;
  }
}

}  // namespace
}  // namespace jobmon
