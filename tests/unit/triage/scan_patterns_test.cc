// A pattern Hyperscan matches as parts (scan_patterns.h PatternDef::parts),
// or partly or wholly in the scan's walk over lines (::at_line_start,
// ::on_every_line, ::confirm, ::carried_test; line_walk_patterns.h), matches
// exactly the lines its whole expression matches: on every line of the
// fixture corpus, on lines written to reach each alternative, and on those
// lines' one-character mutations. And what the walk reads of a line does not
// depend on its srun label's number, nor what the database matches on a line
// on that number or on the lines around it (a line that repeats the one
// before it is not scanned again: chunk_reading.cc).

#include "scan_patterns.h"

#include <gtest/gtest.h>
#include <hs/hs.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "jobmon/triage/step_lines.h"

namespace jobmon::triage {
namespace {

namespace fs = std::filesystem;

// Expressions compiled into one Hyperscan database, each under its id and
// flags.
class Matcher {
 public:
  struct Expression {
    const std::string& text;
    unsigned flags;
    unsigned id;
  };
  // No expressions: a matcher that matches nothing.
  explicit Matcher(const std::vector<Expression>& expressions) {
    if (expressions.empty()) return;
    std::vector<const char*> texts;
    std::vector<unsigned> flags, ids;
    for (const Expression& e : expressions) {
      texts.push_back(e.text.c_str());
      flags.push_back(e.flags);
      ids.push_back(e.id);
    }
    hs_compile_error_t* error = nullptr;
    if (hs_compile_multi(texts.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(texts.size()), HS_MODE_BLOCK, nullptr, &database_,
                         &error) != HS_SUCCESS) {
      ADD_FAILURE() << (error && error->message ? error->message : "compile failed");
      hs_free_compile_error(error);
      return;
    }
    hs_alloc_scratch(database_, &scratch_);
  }
  // All under one id and the same flags.
  Matcher(const std::vector<std::string>& expressions, unsigned flags)
      : Matcher(Uniform(expressions, flags)) {}
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;
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
  // Each match as (where it ends, as the scan's match events give it, its
  // expression's id), in Hyperscan's order.
  std::vector<std::pair<size_t, unsigned>> MatchEndsAndIds(const std::string& line) const {
    std::vector<std::pair<size_t, unsigned>> found;
    if (!database_) return found;
    auto on_match = [](unsigned id, unsigned long long, unsigned long long to, unsigned,
                       void* context) {
      static_cast<std::vector<std::pair<size_t, unsigned>>*>(context)->emplace_back(
          static_cast<size_t>(to), id);
      return 0;
    };
    hs_scan(database_, line.data(), static_cast<unsigned>(line.size()), 0, scratch_, on_match,
            &found);
    return found;
  }
  std::vector<size_t> MatchEnds(const std::string& line) const {
    std::vector<size_t> ends;
    for (const auto& [end, id] : MatchEndsAndIds(line)) ends.push_back(end);
    return ends;
  }
  // The same, sorted.
  std::vector<std::pair<size_t, unsigned>> SortedMatches(const std::string& line) const {
    std::vector<std::pair<size_t, unsigned>> found = MatchEndsAndIds(line);
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  static std::vector<Expression> Uniform(const std::vector<std::string>& expressions,
                                         unsigned flags) {
    std::vector<Expression> uniform;
    for (const std::string& e : expressions) uniform.push_back({e, flags, 0});
    return uniform;
  }
  hs_database_t* database_ = nullptr;
  hs_scratch_t* scratch_ = nullptr;
};

// Every expression and part of every pattern, each under its pattern's id
// and flags, in one database: a superset of what any scan compiles.
Matcher AllExpressions(const std::vector<PatternDef>& patterns) {
  std::vector<Matcher::Expression> all;
  for (size_t id = 0; id < patterns.size(); ++id) {
    const unsigned flags = patterns[id].flags;
    all.push_back({patterns[id].expression, flags, static_cast<unsigned>(id)});
    for (const std::string& part : patterns[id].parts)
      all.push_back({part, flags, static_cast<unsigned>(id)});
  }
  return Matcher(all);
}

std::vector<std::string> CorpusLines() {
  std::vector<std::string> lines;
  for (const auto& entry : fs::recursive_directory_iterator(JOBMON_FIXTURES)) {
    if (!entry.is_regular_file() || entry.file_size() > (4 << 20)) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  return lines;
}

// Lines that reach the alternatives and edges of the split and walked
// patterns, and each with one character replaced, inserted or removed.
std::vector<std::string> ProbeLines() {
  const std::vector<std::string> probes = {"1732000000.25 rank 0 ready",
                                           "3: 1732000000 loss 2.1",
                                           "x 1732000000 mid-line",
                                           "{\"ts\": 1732000000.5, \"step\": 3}",
                                           "wall_time=1732000000 step 4",
                                           "time: 1432000000",
                                           "timestamp:1999999999.0 ok",
                                           "subtime=1732000000",
                                           "time=17320000001",
                                           "12: 1732000000x",
                                           "1732000000.",
                                           "1732000000.5",
                                           "1732000000_",
                                           "1732000000\xc3\xa9",
                                           "17: 1732000000.25.3",
                                           "I1120 10:00:05.000000 77 topology.cc:212] x",
                                           "12: W1120 10:00:05.123456 y",
                                           "E1120 10:00:05.12345 short",
                                           "F1231 23:59:60.999999 ",
                                           "[11/20 10:00:05 detectron2]: x",
                                           "\x1b[32m[11/20 10:00:05 d2]: x",
                                           "3: \x1b[1;32m[11/20 10:00:05]",
                                           "\x1b[1234567m[11/20 10:00:05 x",
                                           "\x1b[m[11/20 10:00:05 x",
                                           "10:00:05 msg",
                                           "[10:00:05] msg",
                                           "10:00:05,123 msg",
                                           "10:00:05.123456] x",
                                           "10:00:05.1234567 x",
                                           "10:00:05",
                                           "10:00:05\tx",
                                           "10:00:05.5]\x0b",
                                           "[10:00:05.5]\r",
                                           "4: [23:59:59,000001]\f",
                                           "12:34: 10:00:05 x",
                                           "completed step: 7, loss",
                                           "Step: 3 loss 2",
                                           "ITERATION#  4",
                                           "iter    5 loss",
                                           "iter\t=#5",
                                           "stepstep:=#1",
                                           "iteration=1/10",
                                           "substep 3 loss",
                                           "steps: 4 loss: 1",
                                           "Iter:x 4",
                                           "step [17/60] loss",
                                           "0: completed step: 12, seconds: 1.0",
                                           "Last completed step: 9 completed step: x",
                                           " [2026-11-20 10:00:00] iteration       10/     100 | x",
                                           "iteration\t3/\t7\t| iteration 4/",
                                           "iteration 3 /7 | iteration 5/6|",
                                           "\x1b[31mstep:  4  \x1b[32mloss:  2.1",
                                           "step: 4\tloss: 1 step:5 loss:",
                                           "validate step: 12 \x1b[m loss: 3",
                                           "step=100, skipped=0, lr=[0.1]",
                                           "0: 2026-11-20 10:00:00,000 INFO x",
                                           "ts=2026-11-20T10:00:05Z",
                                           "12026-11-20 10:00:05",
                                           "--a-b 2026-11-20 10:00:0",
                                           "2026-11-2010:00:05 2026-1-20 10:00:05",
                                           "-2026-11-20 10:00:05-",
                                           "[Rank 0] step=7,skipped=1 step=8, skipped="};
  std::vector<std::string> lines = probes;
  const std::string alphabet = "0123456789 :.,[]/;=#_m\x1b\t\x0b\rIWEFsteprainoSTEPxé|lkd";
  std::mt19937 random(20261130);
  for (const std::string& probe : probes) {
    for (int n = 0; n < 300; ++n) {
      std::string line = probe;
      const size_t at = random() % (line.size() + 1);
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          if (at < line.size()) line[at] = c;
          break;
        case 1:
          line.insert(line.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          if (at < line.size()) line.erase(at, 1);
      }
      lines.push_back(line);
    }
  }
  return lines;
}

TEST(ScanPatterns, APatternMatchedAsPartsMatchesWhatItsWholeMatches) {
  std::vector<std::string> lines = CorpusLines();
  ASSERT_GT(lines.size(), 10000u);
  for (std::string& line : ProbeLines()) lines.push_back(std::move(line));
  size_t split = 0;
  const std::vector<PatternDef> patterns = AllPatterns();
  for (const PatternDef& def : patterns) {
    if (def.parts.empty() && !def.at_line_start && !def.carried_test && !def.on_every_line)
      continue;
    ++split;
    // A carried pattern: its carrier's parts, then its own test.
    const PatternDef& compiled =
        def.carried_test ? patterns.at(static_cast<size_t>(def.carrier)) : def;
    ASSERT_FALSE(compiled.parts.empty() && def.carried_test) << def.expression;
    ASSERT_TRUE(def.parts.empty() || !def.on_every_line) << def.expression;
    const Matcher whole({def.expression}, def.flags), parts(compiled.parts, compiled.flags);
    size_t matched = 0;
    for (const std::string& text : lines) {
      // As the scan sees a line: with its newline, or the last without one.
      for (const std::string& line : {text + "\n", text}) {
        const bool by_whole = whole.Matches(line);
        bool by_parts = def.on_every_line ? def.on_every_line(line) : parts.Matches(line);
        if (def.confirm) by_parts = by_parts && def.confirm(line);
        if (def.carried_test) {
          by_parts = false;
          for (size_t end : parts.MatchEnds(line)) {
            // Asked only where the carrier's match ends with one of its bytes.
            if (end > 0 && def.carried_after.find(line[end - 1]) != std::string::npos)
              by_parts = by_parts || def.carried_test(line, end);
          }
        }
        // Asked only where a stamp can start, as the walk asks it.
        if (def.at_line_start) {
          const LineStart start(line);
          by_parts = by_parts || (start.stamp_possible && def.at_line_start(start));
        }
        EXPECT_EQ(by_whole, by_parts) << def.expression << "\n  on: " << line;
        matched += by_whole ? 1 : 0;
      }
    }
    EXPECT_GT(matched, 1u) << def.expression << " matched no line: the test proves nothing";
  }
  EXPECT_GE(split, 9u);
}

// What the walk reads of a line does not depend on its srun label's number:
// another task's copy of a step line ("1: X" after "0: X", a label as long,
// the database's same matches) takes the patterns read of it
// (chunk_reading.h, Line::copy_of_back). Every walked and carried test, on
// every labelled corpus and probe line, under labels of the same length.
TEST(ScanPatterns, TheWalksTestsDoNotDependOnTheLabelsNumber) {
  std::vector<std::string> texts;
  for (const std::string& line : CorpusLines()) {
    if (const auto [task, rest] = SplitTaskLabel(line); task) texts.emplace_back(rest);
  }
  ASSERT_GT(texts.size(), 1000u);
  for (std::string& probe : ProbeLines()) texts.push_back(std::move(probe));
  const std::vector<PatternDef> patterns = AllPatterns();
  size_t asked = 0;
  for (const PatternDef& def : patterns) {
    if (!def.at_line_start && !def.on_every_line && !def.carried_test) continue;
    const PatternDef* carrier =
        def.carried_test ? &patterns.at(static_cast<size_t>(def.carrier)) : nullptr;
    const Matcher carrier_parts(carrier ? carrier->parts : std::vector<std::string>{},
                                carrier ? carrier->flags : 0);
    for (const std::string& text : texts) {
      for (const auto& [a, b] : {std::pair{"0: ", "7: "}, {"10: ", "99: "}, {" 12: ", "  3: "}}) {
        const std::string one = a + text + "\n", other = b + text + "\n";
        if (def.on_every_line) {
          EXPECT_EQ(def.on_every_line(one), def.on_every_line(other)) << def.expression << one;
        }
        if (def.at_line_start) {
          const LineStart at_one(one), at_other(other);
          EXPECT_EQ(at_one.stamp_possible && def.at_line_start(at_one),
                    at_other.stamp_possible && def.at_line_start(at_other))
              << def.expression << "\n  on: " << one;
        }
        if (carrier) {
          // The carrier's matches after the label: the database matches
          // both copies there alike, or the walk does not copy.
          for (size_t end : carrier_parts.MatchEnds(one)) {
            if (end <= std::strlen(a)) continue;
            EXPECT_EQ(def.carried_test(one, end), def.carried_test(other, end))
                << def.expression << "\n  on: " << one;
          }
        }
        ++asked;
      }
    }
  }
  EXPECT_GT(asked, 10000u);
}

// A line that repeats the one before it after a label as long is not
// scanned again: it takes that line's matches.
TEST(ScanPatterns, TheDatabasesMatchesDoNotDependOnTheLabelsNumber) {
  std::vector<std::string> texts;
  for (const std::string& line : CorpusLines()) texts.emplace_back(WithoutTaskLabel(line));
  for (std::string& probe : ProbeLines()) texts.push_back(std::move(probe));
  const std::vector<PatternDef> patterns = AllPatterns();
  const Matcher database = AllExpressions(patterns);
  size_t matched = 0;
  for (const std::string& text : texts) {
    for (const auto& [a, b] : {std::pair{"0: ", "7: "}, {"10: ", "99: "}, {" 12: ", "  3: "}}) {
      const auto one = database.SortedMatches(a + text + "\n");
      EXPECT_EQ(one, database.SortedMatches(b + text + "\n")) << "on: " << a << text;
      matched += one.empty() ? 0 : 1;
    }
    if (HasFailure()) return;  // the first line that tells, not thousands
  }
  EXPECT_GT(matched, 5000u);
}

// Nor is a line's match found across the lines around it: a chunk holds
// whole lines (log_scan.cc), and the lines a chunk scans without its repeats
// lie end to end (chunk_reading.cc). On each pair of lines that follow each
// other in the corpus, and on lines paired at random.
TEST(ScanPatterns, ALinesMatchesDoNotDependOnTheLinesAroundIt) {
  const std::vector<std::string> corpus = CorpusLines();
  std::vector<std::string> shuffled = corpus;
  for (std::string& probe : ProbeLines()) shuffled.push_back(std::move(probe));
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(20261130));
  const std::vector<PatternDef> patterns = AllPatterns();
  const Matcher database = AllExpressions(patterns);
  size_t pairs = 0;
  auto check = [&](const std::string& first, const std::string& second) {
    const std::string one = first + "\n", other = second + "\n";
    std::vector<std::pair<size_t, unsigned>> apart = database.SortedMatches(one);
    for (auto [end, id] : database.SortedMatches(other)) apart.emplace_back(one.size() + end, id);
    EXPECT_EQ(database.SortedMatches(one + other), apart) << "on: " << one << other;
    ++pairs;
  };
  for (size_t i = 1; i < corpus.size() && !HasFailure(); ++i) check(corpus[i - 1], corpus[i]);
  for (size_t i = 1; i < shuffled.size() && !HasFailure(); ++i) check(shuffled[i - 1], shuffled[i]);
  EXPECT_GT(pairs, 30000u);
}

}  // namespace
}  // namespace jobmon::triage
