#include "jobmon/common/text_lines.h"

#include <gtest/gtest.h>

#include <iterator>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace jobmon {
namespace {

static_assert(std::forward_iterator<TextLines::iterator>);
static_assert(std::ranges::forward_range<TextLines>);
static_assert(!std::is_constructible_v<TextLines, std::string&&>, "a temporary string dangles");
static_assert(std::is_constructible_v<TextLines, const std::string&>);
static_assert(std::is_constructible_v<TextLines, const char*>);

std::vector<std::string> All(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : TextLines(text)) out.emplace_back(line);
  return out;
}

using Lines = std::vector<std::string>;

TEST(TextLines, EmptyTextHasNoLines) {
  EXPECT_EQ(All(""), Lines{});
  EXPECT_EQ(All(std::string_view()), Lines{});
}

TEST(TextLines, OneLineWithoutNewline) { EXPECT_EQ(All("abc"), Lines{"abc"}); }

TEST(TextLines, NoEmptyLineAfterAFinalNewline) {
  EXPECT_EQ(All("abc\n"), Lines{"abc"});
  EXPECT_EQ(All("a\nb\n"), (Lines{"a", "b"}));
}

TEST(TextLines, BlankLinesInTheMiddleAreYielded) {
  EXPECT_EQ(All("a\n\n\nb"), (Lines{"a", "", "", "b"}));
  EXPECT_EQ(All("a\n\n"), (Lines{"a", ""}));
  EXPECT_EQ(All("\na"), (Lines{"", "a"}));
}

TEST(TextLines, NewlineAloneIsOneEmptyLine) {
  EXPECT_EQ(All("\n"), Lines{""});
  EXPECT_EQ(All("\n\n"), (Lines{"", ""}));
}

TEST(TextLines, CarriageReturnIsKept) {
  EXPECT_EQ(All("a\r\nb\r\n\r"), (Lines{"a\r", "b\r", "\r"}));
}

TEST(TextLines, LinesPointIntoTheText) {
  const std::string text = "first\nsecond";
  std::vector<std::string_view> lines;
  for (std::string_view line : TextLines(text)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].data(), text.data());
  EXPECT_EQ(lines[1].data(), text.data() + 6);
}

TEST(TextLines, EarlyBreakStopsThere) {
  Lines seen;
  for (std::string_view line : TextLines("a\nstop\nc\n")) {
    if (line == "stop") break;
    seen.emplace_back(line);
  }
  EXPECT_EQ(seen, Lines{"a"});
}

TEST(TextLines, IteratorsCompareAndCopy) {
  TextLines lines("a\nb");
  auto it = lines.begin();
  auto copy = it++;
  EXPECT_EQ(*copy, "a");
  EXPECT_EQ(*it, "b");
  EXPECT_NE(it, lines.end());
  EXPECT_EQ(++it, lines.end());
  EXPECT_EQ(std::ranges::distance(TextLines("x\n\ny")), 3);
  std::vector<std::string_view> v(lines.begin(), lines.end());
  EXPECT_EQ(v, (std::vector<std::string_view>{"a", "b"}));
}

TEST(FirstLine, UpToTheFirstNewline) {
  EXPECT_EQ(FirstLine("a\nb\n"), "a");
  EXPECT_EQ(FirstLine("abc"), "abc");
  EXPECT_EQ(FirstLine("\nb"), "");
  EXPECT_EQ(FirstLine(""), "");
  EXPECT_EQ(FirstLine("a\r\nb"), "a\r");
}

}  // namespace
}  // namespace jobmon
