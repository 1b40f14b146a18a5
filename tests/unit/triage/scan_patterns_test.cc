// A pattern Hyperscan matches as parts (scan_patterns.h PatternDef::parts)
// matches exactly the lines its whole expression matches: on every line of
// the fixture corpus, and on lines written to reach each alternative.

#include "scan_patterns.h"

#include <gtest/gtest.h>
#include <hs/hs.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace jobmon::triage {
namespace {

namespace fs = std::filesystem;

class Matcher {
 public:
  Matcher(const std::vector<std::string>& expressions, unsigned flags) {
    std::vector<const char*> texts;
    for (const std::string& e : expressions) texts.push_back(e.c_str());
    std::vector<unsigned> all_flags(texts.size(), flags), ids(texts.size(), 0);
    hs_compile_error_t* error = nullptr;
    if (hs_compile_multi(texts.data(), all_flags.data(), ids.data(),
                         static_cast<unsigned>(texts.size()), HS_MODE_BLOCK, nullptr, &database_,
                         &error) != HS_SUCCESS) {
      ADD_FAILURE() << (error && error->message ? error->message : "compile failed");
      hs_free_compile_error(error);
      return;
    }
    hs_alloc_scratch(database_, &scratch_);
  }
  ~Matcher() {
    hs_free_scratch(scratch_);
    hs_free_database(database_);
  }
  bool Matches(const std::string& line) const {
    if (!database_) return false;
    bool found = false;
    auto on_match = [](unsigned, unsigned long long, unsigned long long, unsigned, void* context) {
      *static_cast<bool*>(context) = true;
      return 1;  // one is enough
    };
    hs_scan(database_, line.data(), static_cast<unsigned>(line.size()), 0, scratch_, on_match,
            &found);
    return found;
  }

 private:
  hs_database_t* database_ = nullptr;
  hs_scratch_t* scratch_ = nullptr;
};

std::vector<std::string> CorpusLines() {
  std::vector<std::string> lines;
  for (const auto& entry : fs::recursive_directory_iterator(JOBMON_FIXTURES)) {
    if (!entry.is_regular_file() || entry.file_size() > (4 << 20)) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  return lines;
}

TEST(ScanPatterns, APatternMatchedAsPartsMatchesWhatItsWholeMatches) {
  std::vector<std::string> lines = CorpusLines();
  ASSERT_GT(lines.size(), 10000u);
  for (const char* probe :
       {"1732000000.25 rank 0 ready", "3: 1732000000 loss 2.1", "x 1732000000 mid-line",
        "{\"ts\": 1732000000.5, \"step\": 3}", "wall_time=1732000000 step 4", "time: 1432000000",
        "timestamp:1999999999.0 ok", "subtime=1732000000", "time=17320000001", "12: 1732000000x"}) {
    lines.emplace_back(probe);
  }
  size_t split = 0;
  for (const PatternDef& def : AllPatterns()) {
    if (def.parts.empty()) continue;
    ++split;
    const Matcher whole({def.expression}, def.flags), parts(def.parts, def.flags);
    size_t matched = 0;
    for (const std::string& line : lines) {
      const bool by_whole = whole.Matches(line);
      EXPECT_EQ(by_whole, parts.Matches(line)) << def.expression << "\n  on: " << line;
      matched += by_whole ? 1 : 0;
    }
    EXPECT_GT(matched, 1u) << def.expression << " matched no line: the test proves nothing";
  }
  EXPECT_GT(split, 0u);
}

}  // namespace
}  // namespace jobmon::triage
