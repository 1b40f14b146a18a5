// One row of `jobmon list` (cli/list_view.h).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "list_view.h"

namespace jobmon::cli {
namespace {

using nlohmann::json;

json Row(std::string name) {
  return {{"job_id", 7},
          {"name", std::move(name)},
          {"user", "alice"},
          {"source", "manifest"},
          {"slurm_state", "RUNNING"},
          {"ended", false},
          {"final_class", ""},
          {"phase", "training"},
          {"last_step", 100},
          {"open_incident", nullptr}};
}

TEST(ListLine, AJobsRowInColumns) {
  EXPECT_EQ(
      ListLine(Row("llm")),
      "7        llm                  alice      manifest  RUNNING     training        100  -\n");
}

// A job named with escape sequences (a title rewrite, a screen clear, the
// 8-bit CSI) reaches an admin's terminal as plain text.
TEST(ListLine, AJobNameCannotControlTheTerminal) {
  const std::string line =
      ListLine(Row("x\x1b]0;owned\x07\xc2\x9b"
                   "2J"));
  for (const char* control : {"\x1b", "\x07", "\x9b"}) {
    EXPECT_EQ(line.find(control), std::string::npos) << line;
  }
  EXPECT_NE(line.find("x\xef\xbf\xbd]0;owned\xef\xbf\xbd"), std::string::npos) << line;
}

}  // namespace
}  // namespace jobmon::cli
