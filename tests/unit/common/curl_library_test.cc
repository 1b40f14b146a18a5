// libcurl is loaded at the HTTP client's first request, not with the program
// (common/src/curl_library.h).
#include "curl_library.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace jobmon {
namespace {

bool CurlIsMapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/libcurl") != std::string::npos) return true;
  }
  return false;
}
// Read before main runs, before any test asks for libcurl: whether it came
// in with the program's own libraries.
const bool kCurlMappedAtStart = CurlIsMapped();

TEST(CurlLibrary, IsLoadedAtTheFirstRequestNotWithTheProgram) {
  EXPECT_FALSE(kCurlMappedAtStart) << "libcurl is linked again: every command pays its start-up";
  std::string error;
  const CurlLibrary* curl = LoadCurl(&error);
  ASSERT_NE(curl, nullptr) << error;
  EXPECT_TRUE(CurlIsMapped());
  EXPECT_EQ(LoadCurl(&error), curl) << "loaded once";
  CURL* easy = curl->easy_init();
  ASSERT_NE(easy, nullptr);
  EXPECT_STREQ(curl->easy_strerror(CURLE_OK), "No error");
  curl->easy_cleanup(easy);
}

TEST(CurlLibrary, AMissingLibrarySaysWhatToInstall) {
  std::string error;
  EXPECT_EQ(LoadCurl(&error, "libcurl-jobmon-missing.so.4"), nullptr);
  EXPECT_NE(error.find("libcurl-jobmon-missing.so.4"), std::string::npos) << error;
  EXPECT_NE(error.find("apt-get install libcurl4"), std::string::npos) << error;
}

}  // namespace
}  // namespace jobmon
