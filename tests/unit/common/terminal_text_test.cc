#include "jobmon/common/terminal_text.h"

#include <gtest/gtest.h>

namespace jobmon {
namespace {

const std::string kR = "\xef\xbf\xbd";  // U+FFFD

TEST(TerminalText, PrintableTextAndTabsAreUnchanged) {
  EXPECT_EQ(TerminalText("llama-7b\tnode[1-2] \xc3\xa9t\xc3\xa9"),
            "llama-7b\tnode[1-2] \xc3\xa9t\xc3\xa9");
}

// A job named to rewrite an admin's terminal: ESC sequences, the 8-bit CSI
// (raw and as U+009B), BEL, DEL, a carriage return that overprints.
TEST(TerminalText, NoControlCharacterReachesTheTerminal) {
  EXPECT_EQ(TerminalText("a\x1b]0;pwned\x07z"), "a" + kR + "]0;pwned" + kR + "z");
  EXPECT_EQ(TerminalText("a\x9b"
                         "31mz"),
            "a" + kR + "31mz")
      << "a raw 0x9b byte";
  EXPECT_EQ(TerminalText("a\xc2\x9b"
                         "2Jz"),
            "a" + kR + "2Jz")
      << "U+009B in UTF-8";
  EXPECT_EQ(TerminalText("a\xc2\x85z"), "a" + kR + "z") << "U+0085, NEL";
  EXPECT_EQ(TerminalText("ok\rFAKE\x7f"), "ok" + kR + "FAKE" + kR);
  EXPECT_EQ(TerminalText("\xc2\xa0"), "\xc2\xa0") << "U+00A0 is printable";
}

TEST(TerminalText, OneLineReplacesNewlinesLinesKeepThem) {
  EXPECT_EQ(TerminalText("a\nb"), "a" + kR + "b");
  EXPECT_EQ(TerminalLines("a\nb\x1b[2J\n"), "a\nb" + kR + "[2J\n");
}

}  // namespace
}  // namespace jobmon
