#include "jobmon/common/valid_utf8.h"

#include <gtest/gtest.h>

namespace jobmon {
namespace {

TEST(ValidUtf8, ValidTextIsUnchanged) {
  EXPECT_EQ(ValidUtf8("llama-7b \xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80"),
            "llama-7b \xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80");
  EXPECT_EQ(ValidUtf8(""), "");
}

// What a job's user can put in a name: each invalid sequence becomes U+FFFD.
TEST(ValidUtf8, StrayTruncatedOverlongAndSurrogateBytesBecomeReplacementCharacters) {
  EXPECT_EQ(ValidUtf8("a\xff"
                      "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(ValidUtf8("cut\xe2\x82"), "cut\xef\xbf\xbd");
  EXPECT_EQ(ValidUtf8("\xc0\xaf").find('/'), std::string::npos) << "overlong '/' stays invalid";
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80").find("\xed\xa0\x80"), std::string::npos) << "surrogate";
}

}  // namespace
}  // namespace jobmon
