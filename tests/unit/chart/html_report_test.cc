#include "jobmon/chart/html_report.h"

#include <gtest/gtest.h>

#include "jobmon/common/base64.h"

namespace jobmon::chart {
namespace {

TEST(HtmlReport, SelfContainedWithTheImageInsideAndTheTextEscaped) {
  HtmlPage page;
  page.title = "Job 42 <train>";
  page.subtitle = "hang/busy-wait";
  page.images = {{"steps & GPUs", std::string("\x89PNG\r\n\x1a\nrest", 12)}};
  page.sections = {{"Log", "<script>alert(1)</script> & done"}};
  const std::string html = RenderHtml(page);
  EXPECT_NE(html.find("<title>Job 42 &lt;train&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("src=\"data:image/png;base64," + Base64Encode(page.images[0].png) + "\""),
            std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; done"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'; img-src data:"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(Base64, RoundTripsEveryLengthAndRefusesWhatIsNotBase64) {
  std::string bytes;
  for (int n = 0; n < 40; ++n) {
    EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes) << n;
    bytes.push_back(static_cast<char>(n * 37));
  }
  EXPECT_EQ(Base64Encode("jobmon"), "am9ibW9u");
  EXPECT_FALSE(Base64Decode("abc"));
  EXPECT_FALSE(Base64Decode("a!b="));
}

}  // namespace
}  // namespace jobmon::chart
